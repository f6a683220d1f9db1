"""What each stage of the catalogue costs, from what the committed record measured.

Serves the fan-out's plan and progress line (``attnlab repro``) over the whole catalogue,
and ``benchmarks/catalogue_time.py``. The stages are the ones the params define (every
variant and Winograd variant under every seed, every sweep and its best-trial checks);
their costs come from the record's own files under ``reports/``:

- a training's seconds per step (``wall_s`` over the steps it really ran, the median over
  the variant's recorded runs on the same kind of device) times the steps the params give
  it now, so a changed ``budget.scale`` scales the prediction; a run trained in a seed
  group counts its share of the group's wall time;
- a Winograd training's seconds per step the same way; an evaluation's own ``wall_s``;
- a sweep: its trials, each the study's full length on its variant's step time (an upper
  bound: the pruner stops some early), one after the other; its best-trial check, one
  training and one evaluation of that variant;
- a fixed cost per stage process (start-up, DVC's checks and hashing), for these and for
  the stages that train nothing (probes, cost, Winograd scoring and maps, the report).

A variant whose runs were recorded only on another kind of device borrows that kind's
step time (a GPU run predicts a CPU one too short, a CPU run a GPU one too long); one with
no record at all costs the fixed cost and is named in :attr:`StageCosts.unrecorded`.
"""

import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from attnlab import paths
from attnlab.config.extra_seeds import seeded_stage
from attnlab.config.loader import Params
from attnlab.training.job import TrainJob

# Seconds a stage takes beyond its own work: the process, its imports, DVC's checks.
FIXED_S = 15.0


def device_kind(device: str) -> str:
    """``cpu`` or ``cuda``: the kind of a record's ``device`` (``cuda (NVIDIA H200)``)."""
    return device.split(" ", 1)[0]


def _records(files: list[Path]) -> list[dict]:
    return [json.loads(path.read_text()) for path in files if path.is_file()]


@dataclass(frozen=True)
class RecordedCosts:
    """The record's measured costs, read from one project.

    Attributes:
        root: The project whose ``reports/`` holds the record.
        kind: The device kind the prediction is for (``cpu`` or ``cuda``).
    """

    root: Path
    kind: str = "cpu"

    def step_seconds(self, variant: str) -> float | None:
        """The median seconds per training step of ``variant`` (None: never recorded)."""
        return self._per_step(
            sorted((self.root / paths.METRICS / variant).glob("seed-*/train.json"))
        )

    def winograd_step_seconds(self, variant: str) -> float | None:
        """The median seconds per step of Winograd ``variant`` (None: never recorded)."""
        folder = self.root / paths.WINOGRAD_METRICS / "train" / variant
        return self._per_step(sorted(folder.glob("seed-*.json")))

    def _per_step(self, files: list[Path]) -> float | None:
        runs = _records(files)
        same = [r for r in runs if device_kind(r.get("device", "cpu")) == self.kind] or runs
        steps = [
            (
                r["wall_s"] / len(r.get("group_seeds", [0])),
                r["steps"] - r.get("resumed_from_step", 0),
            )
            for r in same
        ]
        per_step = [wall / ran for wall, ran in steps if ran > 0]
        return statistics.median(per_step) if per_step else None

    def evaluation_seconds(self, variant: str) -> float:
        """The median evaluation wall time of ``variant`` (0 when none is recorded)."""
        runs = _records(sorted((self.root / paths.METRICS / variant).glob("seed-*/eval.json")))
        return statistics.median(r.get("wall_s", 0.0) for r in runs) if runs else 0.0


@dataclass
class StageCosts:
    """Predicted seconds of every stage the params define, and the stages it waits for.

    Attributes:
        seconds: Stage name (DVC addressing) -> predicted seconds on the record's machine.
        reads: Stage name -> the stages whose outputs it reads (for scheduling).
        unrecorded: What the record has no cost for (costed at :data:`FIXED_S`).
    """

    seconds: dict[str, float] = field(default_factory=dict)
    reads: dict[str, tuple[str, ...]] = field(default_factory=dict)
    unrecorded: list[str] = field(default_factory=list)

    def add(self, name: str, seconds: float, reads: tuple[str, ...] = ()) -> None:
        """Cost ``name`` at ``seconds`` plus the fixed cost of its process."""
        self.seconds[name] = seconds + FIXED_S
        self.reads[name] = reads

    def of(self, name: str) -> float:
        """The prediction for ``name``; a stage the params do not cost gets the fixed cost."""
        return self.seconds.get(name, FIXED_S)


def catalogue_costs(params: Params, record: RecordedCosts) -> StageCosts:
    """Every trained stage of the catalogue with its predicted seconds, from ``record``."""
    costs = StageCosts()
    for name in params.variants:
        per_step = record.step_seconds(name)
        if per_step is None:
            costs.unrecorded.append(name)
            continue
        for seed in params.seeds_of(name):
            steps = TrainJob.from_params(params, name, seed).steps
            train = seeded_stage("train", name, seed, params.seeds)
            costs.add(train, per_step * steps)
            evaluate = seeded_stage("evaluate", name, seed, params.seeds)
            costs.add(evaluate, record.evaluation_seconds(name), (train,))
    for name in params.winograd.variants:
        per_step = record.winograd_step_seconds(name)
        if per_step is None:
            costs.unrecorded.append(f"winograd {name}")
            continue
        for seed in params.seeds_of(name):
            steps = TrainJob.from_variant(params, params.winograd.variant(name), seed).steps
            train = seeded_stage("winograd-train", name, seed, params.seeds)
            costs.add(train, per_step * steps)
            costs.add(seeded_stage("winograd-score", name, seed, params.seeds), 0.0, (train,))
    for study_name, study in params.sweeps.studies.items():
        per_step = record.step_seconds(study.variant)
        if per_step is None:
            costs.unrecorded.append(f"sweep {study_name} ({study.variant})")
            continue
        full = TrainJob.from_params(params, study.variant).steps
        trial_steps = max(1, round(full * study.budget))
        costs.add(f"sweep@{study_name}", study.trials * trial_steps * per_step)
        for seed in params.seeds:
            check = per_step * full + record.evaluation_seconds(study.variant)
            costs.add(f"sweep-check@{study_name}-{seed}", check, (f"sweep@{study_name}",))
    return costs
