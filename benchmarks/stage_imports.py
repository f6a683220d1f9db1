"""What a stage that never trains pays at start-up, against the same with Lightning and W&B.

Issue 14's fixed cost: ``evaluate``, ``winograd-score`` and ``winograd-maps`` run about a
hundred times in a ``dvc repro`` of three seeds. They used to import Lightning and W&B
because the packages that hold their readers (``attnlab.training``, ``attnlab.evaluation``)
imported the trainer eagerly. Each stage's ``--help`` (every import the stage makes, no
work) runs in a fresh process two ways through one launcher: as it is now, and with
``attnlab.training.fit`` imported first (Lightning, W&B and the trainer: what the stage
used to load). The two alternate across repeats so a shared machine slows both alike; the
figures are medians of wall and CPU seconds (user + system, the steadier one when other
processes compete for the cores) and of the per-repeat ratios.

    python benchmarks/stage_imports.py --repeats 5
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STAGES = ("evaluate", "winograd_score", "winograd_maps")
LAUNCH = """
import runpy, sys
{preload}
sys.argv = [sys.argv[1], "--help"]
runpy.run_path(sys.argv[0], run_name="__main__")
"""
WAYS = {"now": "", "with Lightning": "import attnlab.training.fit"}
ROW = "{:<16} {:<5} {:>7} {:>17} {:>6} {:>8}"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_help(stage: str, preload: str) -> tuple[float, float]:
    """Wall and CPU seconds of ``pipeline/<stage>.py --help`` in a fresh interpreter."""
    command = [sys.executable, "-c", LAUNCH.format(preload=preload), f"pipeline/{stage}.py"]
    cpu, began = _children_cpu(), time.perf_counter()
    subprocess.run(command, cwd=ROOT, capture_output=True, check=True)
    return time.perf_counter() - began, _children_cpu() - cpu


def main() -> None:
    """Time each stage both ways, alternating, and print medians and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="runs of each way per stage")
    parser.add_argument("--stages", nargs="+", default=STAGES, help="pipeline/ script names")
    args = parser.parse_args()
    print(ROW.format("stage --help", "clock", "now s", "with Lightning s", "ratio", "saved s"))
    for stage in args.stages:
        times: dict[str, list[tuple[float, float]]] = {way: [] for way in WAYS}
        for repeat in range(args.repeats):
            order = list(WAYS) if repeat % 2 == 0 else list(reversed(WAYS))
            for way in order:
                times[way].append(time_help(stage, WAYS[way]))
        now, before = times["now"], times["with Lightning"]
        for label, index in (("wall", 0), ("CPU", 1)):
            a = statistics.median(t[index] for t in now)
            b = statistics.median(t[index] for t in before)
            ratio = statistics.median(y[index] / x[index] for x, y in zip(now, before, strict=True))
            print(ROW.format(stage, label, f"{a:.2f}", f"{b:.2f}", f"{ratio:.2f}", f"{b - a:.2f}"))
    print(f"medians of {args.repeats} alternating runs each; ratio = with Lightning / now")


if __name__ == "__main__":
    main()
