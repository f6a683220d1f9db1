"""Three seeds of P0 as one seed group against three single-seed stages, by the fan-out.

Serves the seed groups of ``attnlab repro`` (:mod:`attnlab.fanout.seed_groups`). One clone
of this checkout runs the data stages once; each measured run copies it and brings the
three ``train@<variant>-<seed>`` stages up to date with ``attnlab repro --retrain``,
``--no-seed-groups`` (each stage its own ``dvc repro --single-item``, as before seed
groups) against the default (the ready stages of one variant as a seed group). Both use
the fan-out's places (one per core, one torch thread each) and record the same dvc.lock
entries. The two kinds alternate, so drift in the machine's load falls on both; the
figures are medians. W&B is disabled: it costs the same per run either way.
``--evaluate`` also brings the seeds' ``evaluate`` stages up to date after their training
(as a group, each command in a warm fork, against one ``dvc repro --single-item`` each).

    python benchmarks/seed_group.py                        # budget 0.01, 3 rounds
    python benchmarks/seed_group.py --evaluate             # training, then evaluation
    python benchmarks/seed_group.py --budget 1.0 --rounds 1
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from fanout_pipeline import clone_project, timed_run

BIN = Path(sys.executable).parent
TARGETS = {0.01: 1.5, 1.0: 1.0}  # the group's speed-up asked for at each budget


def main() -> None:
    """Prepare the data once, then time both kinds in alternation; print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", type=float, default=0.01, help="params budget.scale")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each kind")
    parser.add_argument("--variant", default="ladder-layernorm", help="P0's block")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1337, 1338, 1339])
    parser.add_argument("--jobs", type=int, default=None, help="the fan-out's --jobs")
    parser.add_argument("--evaluate", action="store_true", help="evaluate the seeds too")
    args = parser.parse_args()
    seeds = ",".join(map(str, args.seeds))
    overrides = [f"budget.scale={args.budget}", f"seeds.yaml:seeds=[{seeds}]"]
    family = "evaluate" if args.evaluate else "train"  # an evaluation needs its training
    stages = [f"{family}@{args.variant}-{seed}" for seed in args.seeds]
    # The stages' `python` is this interpreter, activated or not.
    path = f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"
    env = {**os.environ, "PATH": path, "WANDB_MODE": "disabled", "DVC_NO_ANALYTICS": "1"}
    env.pop("OMP_NUM_THREADS", None)
    jobs = ["--jobs", str(args.jobs)] if args.jobs else []
    kinds = {"single stages": ["--no-seed-groups"], "seed group": []}
    seconds: dict[str, list[float]] = {kind: [] for kind in kinds}
    with tempfile.TemporaryDirectory(prefix="attnlab-group-bench-") as tmp:
        data = clone_project(Path(tmp) / "data", overrides)
        environ = {**env, "PYTHONPATH": str(data / "src"), "ATTNLAB_RUN_ROOT": f"{tmp}/runs"}
        timed_run([str(BIN / "dvc"), "repro", "tokenize"], data, environ)
        for round_ in range(args.rounds):
            for kind, flags in kinds.items():
                root = Path(tmp) / f"run-{round_}-{kind.replace(' ', '-')}"
                shutil.copytree(data, root, symlinks=True)
                command = [str(BIN / "attnlab"), "repro", "--retrain", *jobs, *flags, *stages]
                run_env = {**environ, "PYTHONPATH": str(root / "src")}
                seconds[kind].append(timed_run(command, root, run_env))
                shutil.rmtree(root)
    single = statistics.median(seconds["single stages"])
    group = statistics.median(seconds["seed group"])
    print(f"{', '.join(stages)}, budget {args.budget}, {os.cpu_count()} cores")
    for kind, values in seconds.items():
        runs = ", ".join(f"{value:.1f}" for value in values)
        print(f"{kind:14s} median {statistics.median(values):7.1f} s  ({runs})")
    print(f"seed group speed-up: x{single / group:.2f}")
    target = None if args.evaluate else TARGETS.get(args.budget)
    if target is not None:
        print(f"target x{target}: {'met' if single / group >= target else 'NOT met'}")


if __name__ == "__main__":
    main()
