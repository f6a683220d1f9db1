"""Predict the full catalogue's wall time under ``attnlab repro`` from the committed record.

Serves the whole catalogue at the story's budget (``budget.scale: 1.0``). Each stage's
cost comes from what the record measured: a trained variant's seconds per step
(``reports/metrics/<variant>/seed-<seed>/train.json``: ``wall_s`` over the steps it really
ran, one run per seed) times
its steps, an evaluation's and a Winograd training's own ``wall_s``, a sweep's trial
durations (``reports/sweeps/<study>/trials.csv``), each plus a fixed cost per stage
process (start-up, DVC). Steps recorded on two threads are converted to one thread (the
fan-out gives each of two jobs one core) by the fp32 GEMM throughput ratio of one thread
to two. The stages are then list-scheduled, longest first, on ``--jobs`` workers, an
evaluation never before its training. Serial is the plain sum (what ``dvc repro`` takes
at one stage at a time, on the same threads).

    python benchmarks/catalogue_time.py --jobs 2
"""

from __future__ import annotations

import argparse
import csv
import heapq
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
METRICS = ROOT / "reports" / "metrics"
# Two-thread fp32 GEMM throughput over one thread on the development CPU (198 / 105
# GFLOP/s): how much longer a step recorded on two threads takes on one.
ONE_THREAD_SLOWDOWN = 198 / 105


def _json(path: Path) -> dict:
    return json.loads(path.read_text())


def stage_seconds(fixed_s: float, two_thread_prefixes: tuple[str, ...]) -> dict[str, float]:
    """Predicted seconds of every recorded stage on one thread, fixed cost included."""
    stages: dict[str, float] = {}
    for train in sorted(METRICS.glob("*/seed-*/train.json")):
        variant = train.parent.parent.name
        run = f"{variant}-{train.parent.name.removeprefix('seed-')}"  # the stage's matrix key
        record = _json(train)
        per_step = record["wall_s"] / (record["steps"] - record["resumed_from_step"])
        if variant.startswith(two_thread_prefixes):
            per_step *= ONE_THREAD_SLOWDOWN
        stages[f"train@{run}"] = per_step * record["steps"] + fixed_s
        evaluation = train.parent / "eval.json"
        if evaluation.exists():
            stages[f"evaluate@{run}"] = _json(evaluation).get("wall_s", 0.0) + fixed_s
    for train in sorted((METRICS / "winograd" / "train").glob("*/seed-*.json")):
        run = f"{train.parent.name}-{train.stem.removeprefix('seed-')}"
        stages[f"winograd-train@{run}"] = _json(train)["wall_s"] + fixed_s
    for trials in sorted((ROOT / "reports" / "sweeps").glob("*/trials.csv")):
        with open(trials) as handle:
            seconds = sum(float(row["duration_s"] or 0) for row in csv.DictReader(handle))
        stages[f"sweep@{trials.parent.name}"] = seconds + fixed_s
    return stages


def schedule(stages: dict[str, float], jobs: int) -> float:
    """Wall time of a longest-first list schedule on ``jobs`` workers.

    ``evaluate@v`` waits for ``train@v``; everything else is independent.
    """
    free = [0.0] * jobs  # when each worker is next free
    finished: dict[str, float] = {}
    pending = sorted(stages, key=lambda name: -stages[name])
    while pending:
        start = heapq.heappop(free)
        ready = [
            name
            for name in pending
            if not name.startswith("evaluate@")
            or finished.get(name.replace("evaluate@", "train@", 1), float("inf")) <= start
        ]
        if not ready:  # only evaluations whose training is still running: wait for one
            waits = [finished[n.replace("evaluate@", "train@", 1)] for n in pending]
            heapq.heappush(free, min(w for w in waits if w > start))
            continue
        name = ready[0]
        pending.remove(name)
        finished[name] = start + stages[name]
        heapq.heappush(free, finished[name])
    return max(finished.values())


def main() -> None:
    """Print the serial sum and the fan-out's predicted wall time."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2, help="stages at once (one thread each)")
    parser.add_argument(
        "--fixed-s", type=float, default=15.0, help="seconds per stage beyond its work"
    )
    parser.add_argument(
        "--two-thread",
        nargs="*",
        default=["norm-"],
        help="variant name prefixes whose record was measured on two threads",
    )
    parser.add_argument("--target-h", type=float, default=1.5, help="the issue's target")
    args = parser.parse_args()
    stages = stage_seconds(args.fixed_s, tuple(args.two_thread))
    serial = sum(stages.values())
    wall = schedule(stages, args.jobs)
    longest = max(stages, key=stages.__getitem__)
    print(f"{len(stages)} recorded stages, {args.fixed_s:.0f} s fixed cost each")
    print(f"serial, one thread: {serial / 3600:.2f} h")
    print(f"fan-out, {args.jobs} jobs x 1 thread: {wall / 3600:.2f} h (x{serial / wall:.2f})")
    print(f"longest stage: {longest} {stages[longest] / 3600:.2f} h")
    print(f"target {args.target_h} h: {'met' if wall <= args.target_h * 3600 else 'NOT met'}")


if __name__ == "__main__":
    main()
