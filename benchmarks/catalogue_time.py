"""Predict the full catalogue's wall time under ``attnlab repro`` from the committed record.

Serves the whole catalogue at the story's budget (``budget.scale: 1.0``). Every stage's
cost is what the record measured for it (``attnlab.fanout.costs``: a training's seconds per
step on the CPU times its steps, an evaluation's wall time, a sweep's trials at full
length, a fixed cost per stage process); the stages that train nothing (probes, cost, the
report) cost the fixed cost. The stages are then list-scheduled, longest first, on
``--jobs`` workers, each after the stages it reads (``attnlab.fanout.forecast``); serial is
the plain sum (``dvc repro``, one stage at a time). This is the record machine's time:
``attnlab repro --retrain`` prints the same prediction scaled by the machine it runs on.
A variant with no record is named and left out of the figures.

    python benchmarks/catalogue_time.py --jobs 2
"""

import argparse
from pathlib import Path

from attnlab.config import load_params
from attnlab.fanout.costs import FIXED_S, RecordedCosts, catalogue_costs
from attnlab.fanout.forecast import schedule

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    """Print the serial sum and the fan-out's predicted wall time."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2, help="stages at once (one thread each)")
    parser.add_argument("--scale", type=float, default=1.0, help="budget.scale to predict")
    parser.add_argument("--target-h", type=float, default=1.5, help="the issue's target")
    args = parser.parse_args()
    params = load_params(ROOT / "params.yaml")
    params = params.model_copy(
        update={"budget": params.budget.model_copy(update={"scale": args.scale})}
    )
    costs = catalogue_costs(params, RecordedCosts(ROOT))
    stages, reads = dict(costs.seconds), dict(costs.reads)
    stages.update(probes=FIXED_S, cost=FIXED_S)
    stages["report"], reads["report"] = FIXED_S, tuple(stages)
    serial = sum(stages.values())
    wall = schedule(stages, reads, args.jobs)
    longest = max(stages, key=stages.__getitem__)
    trained = sum(s for name, s in stages.items() if name.startswith("train@"))
    print(f"{len(stages)} stages at budget.scale {args.scale}, {FIXED_S:.0f} s fixed cost each")
    if costs.unrecorded:
        print(f"not recorded, left out: {', '.join(costs.unrecorded)}")
    print(f"training of the variants x {len(params.seeds)} seeds: {trained / 3600:.2f} h")
    print(f"serial, one thread: {serial / 3600:.2f} h")
    print(f"fan-out, {args.jobs} jobs x 1 thread: {wall / 3600:.2f} h (x{serial / wall:.2f})")
    print(f"longest stage: {longest} {stages[longest] / 3600:.2f} h")
    print(f"target {args.target_h} h: {'met' if wall <= args.target_h * 3600 else 'NOT met'}")


if __name__ == "__main__":
    main()
