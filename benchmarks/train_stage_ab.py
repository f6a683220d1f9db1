"""The train stage's wall time with this checkout's library against another checkout's.

Made to check that drawing the ``val/ppl`` curve through Lightning's validation loop costs
no more than the callback that drew it before: the same stage command (``pipeline/train.py
--variant V --seed S --no-resume``) runs in one project folder (its ``params.yaml`` and
``data/tokens``, ``data/tokenizer`` ready, e.g. a throw-away clone after
``dvc repro tokenize``), with ``PYTHONPATH`` pointing at this checkout's ``src`` or at the
baseline's. The two alternate across repeats so a shared machine slows both alike; the
figures are medians of wall and CPU seconds (user + system) and of the per-repeat ratios.
Run state goes to a temporary ``ATTNLAB_RUN_ROOT``; W&B is off.

    python benchmarks/train_stage_ab.py --project /tmp/clone --baseline-src /tmp/main/src
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROW = "{:<20} {:>8} {:>8} {:>8} {:>8}"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_stage(project: Path, src: Path, variant: str, seed: int) -> tuple[float, float]:
    """Wall and CPU seconds of one train stage run in ``project`` with the library ``src``."""
    with tempfile.TemporaryDirectory() as runs:
        env = {
            **os.environ,
            "PYTHONPATH": str(src),
            "ATTNLAB_RUN_ROOT": runs,
            "WANDB_MODE": "disabled",
        }
        command = [sys.executable, "pipeline/train.py", "--variant", variant, "--seed", str(seed)]
        cpu, began = _children_cpu(), time.perf_counter()
        subprocess.run(
            [*command, "--no-resume"], cwd=project, env=env, capture_output=True, check=True
        )
        return time.perf_counter() - began, _children_cpu() - cpu


def main() -> None:
    """Time the stage both ways, alternating, and print medians and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--project", type=Path, required=True, help="a prepared project folder")
    parser.add_argument("--baseline-src", type=Path, required=True, help="the other src/")
    parser.add_argument("--variant", default="ladder-layernorm", help="the variant to train")
    parser.add_argument("--seed", type=int, default=1337, help="the run's seed")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each way")
    args = parser.parse_args()
    ways = {"baseline": args.baseline_src.resolve(), "this checkout": ROOT / "src"}
    times: dict[str, list[tuple[float, float]]] = {way: [] for way in ways}
    for repeat in range(args.repeats):
        order = list(ways) if repeat % 2 == 0 else list(reversed(ways))
        for way in order:
            times[way].append(time_stage(args.project, ways[way], args.variant, args.seed))
    print(f"train stage of {args.variant}, {args.repeats} runs each, alternating")
    print(ROW.format("", "wall s", "cpu s", "min wall", "max wall"))
    for way, runs in times.items():
        walls, cpus = [w for w, _ in runs], [c for _, c in runs]
        medians = (statistics.median(walls), statistics.median(cpus))
        print(
            ROW.format(
                way, *(f"{m:.2f}" for m in medians), f"{min(walls):.2f}", f"{max(walls):.2f}"
            )
        )
    pairs = zip(times["this checkout"], times["baseline"], strict=True)
    ratios = [(a[0] / b[0], a[1] / b[1]) for a, b in pairs]
    wall_ratio = statistics.median(r for r, _ in ratios)
    cpu_ratio = statistics.median(r for _, r in ratios)
    print(f"this checkout / baseline: wall {wall_ratio:.3f}, cpu {cpu_ratio:.3f} (median ratio)")


if __name__ == "__main__":
    main()
