"""Per-job start-up of ``attnlab repro --executor slurm`` against a local child's.

Serves the SLURM executor (:mod:`attnlab.fanout.slurm`). Each round starts one command
both ways, the same command (this interpreter printing the wall clock as its first act):
submitted as the executor submits a unit (its ``sbatch`` options from ``runtime.slurm``,
``--wrap "exec ..."``), and started as a local child (``subprocess.Popen``, as
:meth:`~attnlab.fanout.children.Child.start` does). The figure is the clock it printed minus
the clock just before the submission or the ``Popen``: what the scheduler adds before a
unit's work begins (the queue, the allocation, slurmd's launch of the batch step). The
jobs run one at a time on an idle cluster; the figures are medians and quartiles.

Needs a cluster: the one ``SLURM_CONF`` names, else a single-node one started as the tests
start theirs (``tests/slurm/cluster.py``: as root, with ``slurm-wlm`` and ``munge``).

    python benchmarks/slurm_overhead.py              # 10 rounds
    python benchmarks/slurm_overhead.py --rounds 30
"""

import argparse
import contextlib
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from attnlab.config.slurm import SlurmParams
from attnlab.fanout.slurm import SlurmExecutor

ROOT = Path(__file__).resolve().parents[1]
PRINT_CLOCK = [sys.executable, "-c", "import time; print(f'started {time.time():.6f}')"]


def _started(log: Path, timeout_s: float = 120) -> float:
    """The clock the command printed into ``log``, once it has."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        text = log.read_text() if log.exists() else ""
        for line in text.splitlines():
            if line.startswith("started "):
                return float(line.split()[1])
        time.sleep(0.01)
    raise RuntimeError(f"{log}: nothing started within {timeout_s:.0f} s")


def on_slurm(folder: Path, round_: int, env: dict[str, str]) -> float:
    """Seconds from submission to the job's first line."""
    log = folder / f"job-{round_}.log"
    executor = SlurmExecutor(SlurmParams(cpus_per_job=1, mem_per_job="100M", min_time_minutes=1))
    options = executor.sbatch_options(("benchmark",), log, folder)
    command = ["sbatch", *options, "--wrap", "exec " + shlex.join(PRINT_CLOCK)]
    before = time.time()
    subprocess.run(command, env=env, check=True, capture_output=True)
    return _started(log) - before


def locally(folder: Path, round_: int) -> float:
    """Seconds from ``Popen`` to the child's first line."""
    log = folder / f"child-{round_}.log"
    with open(log, "ab") as handle:
        before = time.time()
        child = subprocess.Popen(PRINT_CLOCK, stdout=handle, start_new_session=True)
    started = _started(log)
    child.wait()
    return started - before


@contextlib.contextmanager
def cluster(folder: Path) -> Iterator[dict[str, str]]:
    """The clients' environment: ``SLURM_CONF``'s cluster, else one started under ``folder``."""
    if os.environ.get("SLURM_CONF"):
        yield dict(os.environ)
        return
    sys.path.insert(0, str(ROOT / "tests" / "slurm"))
    from cluster import slurm_cluster

    with slurm_cluster(folder / "cluster") as running:
        yield {**os.environ, **running.env}


def _summary(name: str, seconds: list[float]) -> str:
    q1, median, q3 = statistics.quantiles(seconds, n=4)
    return f"{name:<12} median {median:6.3f} s   quartiles {q1:.3f}-{q3:.3f} s"


def main() -> None:
    """Alternate a SLURM job and a local child ``--rounds`` times; print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="slurm-overhead-") as tmp:
        folder = Path(tmp)
        with cluster(folder) as env:
            slurm, local = [], []
            for round_ in range(args.rounds):  # alternated: the machine's load falls on both
                slurm.append(on_slurm(folder, round_, env))
                local.append(locally(folder, round_))
    print(f"submit -> start of the unit's command, {args.rounds} rounds:")
    print(_summary("SLURM job", slurm))
    print(_summary("local child", local))
    job, child = statistics.median(slurm), statistics.median(local)
    print(f"SLURM adds {job - child:.3f} s per unit (x{job / child:.1f} a local child's start)")


if __name__ == "__main__":
    main()
