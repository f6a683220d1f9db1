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

Which of a variant's runs price its step, best first: those on this kind of device and with
this machine's fp32 kernels (a run on oneMKL's AVX-512 kernels steps faster than one on its
AVX2 kernels, which the matrix-product calibration of :mod:`~attnlab.fanout.forecast` does
not see), then those on this kind of device, then any; within each, runs trained from step
0 before resumed ones (a resume's start-up falls on its few steps). A variant priced from
runs on other (or unnamed) kernels is named in :attr:`StageCosts.other_kernels`. A variant never
recorded borrows the step time of a recorded variant of the same model and batch (E09's
``*-lr3e-3`` rows differ from theirs only in the learning rate); one with no such twin
costs the fixed cost and is named in :attr:`StageCosts.unrecorded`.

A training stopped part-way costs only its steps left (``done``: the steps its resume point
holds, :func:`~attnlab.fanout.resume_points.resume_steps`).
"""

import json
import statistics
from collections.abc import Mapping
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
        kernels: This machine's fp32 kernels (:func:`attnlab.mkl_avx512.fp32_matmul_path`);
            None: any run's kernels serve.
    """

    root: Path
    kind: str = "cpu"
    kernels: str | None = None

    def step_seconds(self, variant: str) -> float | None:
        """The median seconds per training step of ``variant`` (None: never recorded)."""
        return _per_step(self._priced(self._train_files(variant)))

    def winograd_step_seconds(self, variant: str) -> float | None:
        """The median seconds per step of Winograd ``variant`` (None: never recorded)."""
        return _per_step(self._priced(self._winograd_files(variant)))

    def on_other_kernels(self, variant: str) -> bool:
        """Whether ``variant``'s step time comes from runs not known to be on our kernels."""
        runs = self._priced(self._train_files(variant))
        return self.kernels is not None and any(_kernels(r) != self.kernels for r in runs)

    def evaluation_seconds(self, variant: str) -> float:
        """The median evaluation wall time of ``variant`` (0 when none is recorded)."""
        runs = _records(sorted((self.root / paths.METRICS / variant).glob("seed-*/eval.json")))
        return statistics.median(r.get("wall_s", 0.0) for r in runs) if runs else 0.0

    def _train_files(self, variant: str) -> list[Path]:
        return sorted((self.root / paths.METRICS / variant).glob("seed-*/train.json"))

    def _winograd_files(self, variant: str) -> list[Path]:
        folder = self.root / paths.WINOGRAD_METRICS / "train" / variant
        return sorted(folder.glob("seed-*.json"))

    def _priced(self, files: list[Path]) -> list[dict]:
        """The runs that price a step: the first non-empty class, best first (module doc)."""
        runs = _records(files)
        kind = [r for r in runs if device_kind(r.get("device", "cpu")) == self.kind]
        ours = [r for r in kind if self.kernels is None or _kernels(r) == self.kernels]
        for candidates in (ours, kind, runs):
            if candidates:
                whole = [r for r in candidates if not r.get("resumed_from_step")]
                return whole or candidates
        return []


def _kernels(run: dict) -> str | None:
    """The fp32 kernels a run trained on (None: recorded before runs named them)."""
    kernels = run.get("kernels")
    return kernels.get("fp32_matmul") if isinstance(kernels, dict) else None


def _per_step(runs: list[dict]) -> float | None:
    """The median seconds per step of ``runs``; a grouped run counts its share of the group."""
    per_step = [
        r["wall_s"] / len(r.get("group_seeds") or [0]) / ran
        for r in runs
        if (ran := r["steps"] - r.get("resumed_from_step", 0)) > 0
    ]
    return statistics.median(per_step) if per_step else None


@dataclass
class StageCosts:
    """Predicted seconds of every stage the params define, and the stages it waits for.

    Attributes:
        seconds: Stage name (DVC addressing) -> predicted seconds on the record's machine.
        reads: Stage name -> the stages whose outputs it reads (for scheduling).
        unrecorded: What the record has no cost for (costed at :data:`FIXED_S`).
        borrowed: Variant never recorded -> the recorded twin whose step time it takes.
        other_kernels: Variants priced from runs not known to be on this machine's fp32
            kernels (other kernels, or recorded before runs named theirs).
    """

    seconds: dict[str, float] = field(default_factory=dict)
    reads: dict[str, tuple[str, ...]] = field(default_factory=dict)
    unrecorded: list[str] = field(default_factory=list)
    borrowed: dict[str, str] = field(default_factory=dict)
    other_kernels: list[str] = field(default_factory=list)

    def add(self, name: str, seconds: float, reads: tuple[str, ...] = ()) -> None:
        """Cost ``name`` at ``seconds`` plus the fixed cost of its process."""
        self.seconds[name] = seconds + FIXED_S
        self.reads[name] = reads

    def of(self, name: str) -> float:
        """The prediction for ``name``; a stage the params do not cost gets the fixed cost."""
        return self.seconds.get(name, FIXED_S)


Done = Mapping[tuple[str, int], int]  # (variant, seed) -> steps its resume point holds


def catalogue_costs(params: Params, record: RecordedCosts, done: Done | None = None) -> StageCosts:
    """Every trained stage of the catalogue with its predicted seconds, from ``record``.

    Args:
        params: The validated params.
        record: The record's measured costs.
        done: Steps already trained by runs stopped part-way; they cost only the rest.
    """
    done = done or {}
    costs = StageCosts()
    for name in params.variants:
        priced = _priced_as(params, record, name)
        if priced is None:
            costs.unrecorded.append(name)
            continue
        source, per_step = priced
        if source != name:
            costs.borrowed[name] = source
        if record.on_other_kernels(source):
            costs.other_kernels.append(name)
        for seed in params.seeds_of(name):
            steps = TrainJob.from_params(params, name, seed).steps
            train = seeded_stage("train", name, seed, params.seeds)
            costs.add(train, per_step * max(0, steps - done.get((name, seed), 0)))
            evaluate = seeded_stage("evaluate", name, seed, params.seeds)
            costs.add(evaluate, record.evaluation_seconds(source), (train,))
    for name in params.winograd.variants:
        per_step = record.winograd_step_seconds(name)
        if per_step is None:
            costs.unrecorded.append(f"winograd {name}")
            continue
        for seed in params.seeds_of(name):
            steps = TrainJob.from_variant(params, params.winograd.variant(name), seed).steps
            train = seeded_stage("winograd-train", name, seed, params.seeds)
            costs.add(train, per_step * max(0, steps - done.get((name, seed), 0)))
            costs.add(seeded_stage("winograd-score", name, seed, params.seeds), 0.0, (train,))
    for study_name, study in params.sweeps.studies.items():
        priced = _priced_as(params, record, study.variant)
        if priced is None:
            costs.unrecorded.append(f"sweep {study_name} ({study.variant})")
            continue
        _, per_step = priced
        full = TrainJob.from_params(params, study.variant).steps
        trial_steps = max(1, round(full * study.budget))
        costs.add(f"sweep@{study_name}", study.trials * trial_steps * per_step)
        for seed in params.seeds:
            check = per_step * full + record.evaluation_seconds(source)
            costs.add(f"sweep-check@{study_name}-{seed}", check, (f"sweep@{study_name}",))
    return costs


def _priced_as(params: Params, record: RecordedCosts, name: str) -> tuple[str, float] | None:
    """``(variant, seconds per step)`` that price ``name``: itself, else a recorded twin.

    None when neither is recorded. A twin trains the same model on batches of the same
    size, so its steps take as long.
    """
    resolved = params.variant(name)
    shape = (resolved.model, resolved.train.batch_size)
    twins = [
        other
        for other in params.variants
        if (params.variant(other).model, params.variant(other).train.batch_size) == shape
    ]
    for source in (name, *twins):
        per_step = record.step_seconds(source)
        if per_step is not None:
            return source, per_step
    return None
