"""Predict the full catalogue's wall time under ``attnlab repro`` from the committed record.

Serves the whole catalogue at the story's budget (``budget.scale: 1.0``). The stages are
the ones params.yaml defines (every variant and Winograd variant under every seed, both
sweeps, their best-trial checks); their costs come from what the record measured:

- a training's seconds per step (``wall_s`` over the steps it really ran, the median over
  the variant's recorded runs, ``reports/metrics/<variant>/seed-<seed>/train.json`` or
  the single-seed layout ``reports/metrics/<variant>/train.json``) times the steps
  params give it at ``--scale``;
- an evaluation's and a Winograd training's own ``wall_s``;
- a sweep: its trials, each the study's full length on its variant's step time (an upper
  bound: the pruner stops some early), one after the other; its best-trial check, one
  training and one evaluation of that variant per seed;
- a fixed cost per stage process (start-up, DVC), for these and the stages that train
  nothing (probes, cost, Winograd scoring and maps, the report).

Steps recorded on two threads (``--two-thread``) are converted to one thread (the fan-out
gives each of two jobs one core) by the fp32 GEMM throughput ratio of one thread to two.
The stages are then list-scheduled, longest first, on ``--jobs`` workers, each after the
stages it reads. Serial is the plain sum (``dvc repro``, one stage at a time, same
threads). A variant with no record is named and left out of the figures.

    python benchmarks/catalogue_time.py --jobs 2
"""

from __future__ import annotations

import argparse
import heapq
import json
import statistics
from pathlib import Path

from attnlab.config import load_params
from attnlab.config.loader import Params
from attnlab.training.runs import TrainJob

ROOT = Path(__file__).resolve().parents[1]
METRICS = ROOT / "reports" / "metrics"
# Two-thread fp32 GEMM throughput over one thread on the development CPU (198 / 105
# GFLOP/s): how much longer a step recorded on two threads takes on one.
ONE_THREAD_SLOWDOWN = 198 / 105
# The record's E11 runs trained on two threads (the others on one).
TWO_THREAD_RECORD = ("norm-pre", "norm-pre-warmup", "norm-post", "norm-post-warmup")


def _records(folder: Path, name: str) -> list[dict]:
    """Every recorded ``name``.json of one run folder, per seed or single-seed."""
    files = sorted(folder.glob(f"seed-*/{name}.json")) or [folder / f"{name}.json"]
    return [json.loads(f.read_text()) for f in files if f.is_file()]


def step_seconds(variant: str, two_thread: set[str]) -> float | None:
    """The record's median seconds per training step of ``variant`` on one thread."""
    runs = _records(METRICS / variant, "train")
    if not runs:
        return None
    per_step = statistics.median(r["wall_s"] / (r["steps"] - r["resumed_from_step"]) for r in runs)
    return per_step * (ONE_THREAD_SLOWDOWN if variant in two_thread else 1.0)


def evaluation_seconds(variant: str) -> float:
    """The record's median evaluation wall time of ``variant`` (0 when none is recorded)."""
    runs = _records(METRICS / variant, "eval")
    return statistics.median(r.get("wall_s", 0.0) for r in runs) if runs else 0.0


def winograd_seconds(variant: str) -> float | None:
    """The record's median Winograd training wall time of ``variant``."""
    folder = METRICS / "winograd" / "train"
    files = sorted((folder / variant).glob("seed-*.json")) or [folder / f"{variant}.json"]
    walls = [json.loads(f.read_text())["wall_s"] for f in files if f.is_file()]
    return statistics.median(walls) if walls else None


Stages = dict[str, tuple[float, tuple[str, ...]]]  # name -> (seconds, the stages it reads)


def catalogue_stages(
    params: Params, fixed_s: float, two_thread: set[str]
) -> tuple[Stages, list[str]]:
    """Every stage of the catalogue with its predicted seconds, and the unrecorded variants."""
    stages: Stages = {"probes": (fixed_s, ()), "cost": (fixed_s, ())}
    missing: list[str] = []
    for name in params.variants:
        per_step = step_seconds(name, two_thread)
        if per_step is None:
            missing.append(name)
            continue
        for seed in params.seeds:
            steps = TrainJob.from_params(params, name, seed).steps
            stages[f"train@{name}-{seed}"] = (per_step * steps + fixed_s, ())
            stages[f"evaluate@{name}-{seed}"] = (
                evaluation_seconds(name) + fixed_s,
                (f"train@{name}-{seed}",),
            )
    for name in params.winograd.variants:
        wall = winograd_seconds(name)
        if wall is None:
            missing.append(f"winograd {name}")
            continue
        for seed in params.seeds:
            stages[f"winograd-train@{name}-{seed}"] = (wall + fixed_s, ())
            stages[f"winograd-score@{name}-{seed}"] = (fixed_s, (f"winograd-train@{name}-{seed}",))
    for study_name, study in params.sweeps.studies.items():
        per_step = step_seconds(study.variant, two_thread)
        if per_step is None:
            missing.append(f"sweep {study_name} ({study.variant})")
            continue
        full = TrainJob.from_params(params, study.variant).steps
        trial_steps = max(1, round(full * study.budget))
        sweep = f"sweep@{study_name}"
        stages[sweep] = (study.trials * trial_steps * per_step + fixed_s, ())
        for seed in params.seeds:
            check = per_step * full + evaluation_seconds(study.variant) + fixed_s
            stages[f"sweep-check@{study_name}-{seed}"] = (check, (sweep,))
    stages["report"] = (fixed_s, tuple(stages))
    return stages, missing


def schedule(stages: Stages, jobs: int) -> float:
    """Wall time of a longest-first list schedule on ``jobs`` workers, reads respected."""
    free = [0.0] * jobs  # when each worker is next free
    finished: dict[str, float] = {}
    pending = sorted(stages, key=lambda name: -stages[name][0])
    while pending:
        start = heapq.heappop(free)
        ready = [
            name
            for name in pending
            if all(finished.get(dep, float("inf")) <= start for dep in stages[name][1])
        ]
        if not ready:  # everything left waits on a running stage: idle until the next ends
            heapq.heappush(free, min(end for end in finished.values() if end > start))
            continue
        name = ready[0]
        pending.remove(name)
        finished[name] = start + stages[name][0]
        heapq.heappush(free, finished[name])
    return max(finished.values())


def main() -> None:
    """Print the serial sum and the fan-out's predicted wall time."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2, help="stages at once (one thread each)")
    parser.add_argument("--scale", type=float, default=1.0, help="budget.scale to predict")
    parser.add_argument(
        "--fixed-s", type=float, default=15.0, help="seconds per stage beyond its work"
    )
    parser.add_argument(
        "--two-thread",
        nargs="*",
        default=list(TWO_THREAD_RECORD),
        help="variants whose record was measured on two threads",
    )
    parser.add_argument("--target-h", type=float, default=1.5, help="the issue's target")
    args = parser.parse_args()
    params = load_params(ROOT / "params.yaml")
    params = params.model_copy(
        update={"budget": params.budget.model_copy(update={"scale": args.scale})}
    )
    stages, missing = catalogue_stages(params, args.fixed_s, set(args.two_thread))
    serial = sum(seconds for seconds, _ in stages.values())
    wall = schedule(stages, args.jobs)
    longest = max(stages, key=lambda name: stages[name][0])
    trained = sum(s for name, (s, _) in stages.items() if name.startswith("train@"))
    print(
        f"{len(stages)} stages at budget.scale {args.scale}, {args.fixed_s:.0f} s fixed cost each"
    )
    if missing:
        print(f"not recorded, left out: {', '.join(missing)}")
    print(f"training of the variants x {len(params.seeds)} seeds: {trained / 3600:.2f} h")
    print(f"serial, one thread: {serial / 3600:.2f} h")
    print(f"fan-out, {args.jobs} jobs x 1 thread: {wall / 3600:.2f} h (x{serial / wall:.2f})")
    print(f"longest stage: {longest} {stages[longest][0] / 3600:.2f} h")
    print(f"target {args.target_h} h: {'met' if wall <= args.target_h * 3600 else 'NOT met'}")


if __name__ == "__main__":
    main()
