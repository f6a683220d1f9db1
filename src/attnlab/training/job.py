"""One training job, fully resolved, and where its resume state and W&B files live.

A :class:`TrainJob` is one run of a variant of docs/catalogue.md with the budget applied:
the steps and warmup it really trains, its seed, and the hardware. The run's seed sets
both things a seed controls (docs/catalogue.md, P0, Seeds), the initial weights with
dropout (:attr:`TrainJob.init_seed`) and the batch order (:attr:`TrainJob.data_seed`),
unless the variant's recipe pins one. Its :func:`fingerprint` hashes everything that
shapes what the run records, so a checkpoint is only ever resumed by the run that wrote it.

Resume state and W&B runs live under a *run root* outside the repository (default
``~/.cache/attnlab``, or ``ATTNLAB_RUN_ROOT``): DVC deletes a stage's outputs before
rerunning it, and deletes everything that is not an output when a ``--temp`` or queued
experiment ends (PITFALLS 2), so nothing that must survive a kill can live in the project.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attnlab import result_code
from attnlab.config.loader import Params
from attnlab.config.training import RuntimeParams, TrainerParams
from attnlab.config.variants import Variant
from attnlab.paths import seed_label

if TYPE_CHECKING:  # the curve's module loads Lightning's callbacks
    from attnlab.metrics.validation_curve import ValidationCurve

RUN_ROOT_ENV = "ATTNLAB_RUN_ROOT"
DEFAULT_RUN_ROOT = Path("~/.cache/attnlab")


@dataclass(frozen=True)
class TrainJob:
    """A variant with the budget applied, and everything else its training run reads."""

    variant: Variant
    seed: int
    budget_scale: float
    steps: int
    warmup_steps: int
    trainer: TrainerParams
    runtime: RuntimeParams

    @classmethod
    def from_params(cls, params: Params, name: str, seed: int | None = None) -> TrainJob:
        """Resolve variant ``name``, scaling its steps and warmup by ``budget.scale``.

        Args:
            params: The validated params.
            name: A key of ``variants``.
            seed: The run's seed (one of ``seeds``, for the train stage); None means the
                root ``seed`` (a sweep trial).

        Raises:
            ParamsError: no variant has that name.
        """
        return cls.from_variant(params, params.variant(name), seed)

    @classmethod
    def from_variant(cls, params: Params, variant: Variant, seed: int | None = None) -> TrainJob:
        """A job for an already resolved ``variant`` (one not listed under ``variants``).

        The budget, hardware and runtime (checkpoints, W&B) come from ``params``, and so does
        the root ``seed`` when ``seed`` is None.
        """
        steps, warmup = params.budget.schedule(variant.train)
        return cls(
            variant=variant,
            seed=params.seed if seed is None else seed,
            budget_scale=params.budget.scale,
            steps=steps,
            warmup_steps=warmup,
            trainer=params.trainer,
            runtime=params.runtime,
        )

    @property
    def init_seed(self) -> int:
        """The seed of the initial weights and of dropout: ``train.init_seed``, else the run's."""
        pinned = self.variant.train.init_seed
        return self.seed if pinned is None else pinned

    @property
    def data_seed(self) -> int:
        """The seed of the batch order (each step's batch): ``train.data_seed``, else the run's."""
        pinned = self.variant.train.data_seed
        return self.seed if pinned is None else pinned

    def seeds(self) -> dict[str, int]:
        """The run's seed and the two it resolves to, as every record of the run states them."""
        return {"seed": self.seed, "init_seed": self.init_seed, "data_seed": self.data_seed}

    @property
    def tokens_per_step(self) -> int:
        """Input tokens of one global batch: batch_size x block_size."""
        return self.variant.train.batch_size * self.variant.model.block_size

    def config(self) -> dict[str, Any]:
        """The resolved configuration as plain JSON values (W&B, the model folder, fingerprint)."""
        return {
            "variant": self.variant.name,
            "experiment": self.variant.experiment,
            "model": dataclasses.asdict(self.variant.model),
            "train": self.variant.train.model_dump(),
            "budget": {"scale": self.budget_scale},
            "steps": self.steps,
            "warmup_steps": self.warmup_steps,
            **self.seeds(),
            "trainer": self.trainer.model_dump(),
        }


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def fingerprint(job: TrainJob, train_tokens: Path, curve: ValidationCurve | None = None) -> str:
    """A short hash of everything that shapes what the run records.

    That is: the whole configuration the run records (:meth:`TrainJob.config`: the model,
    the recipe, the budget and the steps it scales, the run's seed and the init and data
    seeds it resolves to, so that two seeds never share resume state, and every
    ``trainer`` knob), the ``val/ppl`` curve's definition when one is drawn (its windows'
    bytes, the whole validation split's; its cadence; its batch size) with the code that
    scores it, the train split's
    bytes, the library code that trains (:data:`attnlab.result_code.WEIGHTS`) and the torch
    and Lightning versions. Not ``runtime`` (checkpoint and logging intervals, W&B): it
    changes nothing a run records.

    Args:
        job: The run.
        train_tokens: The file the batches are drawn from.
        curve: The validation curve the fit draws, if any.
    """
    code = result_code.WEIGHTS + (result_code.CURVE if curve is not None else ())
    described = {
        "config": job.config(),
        "curve": curve.definition() if curve is not None else None,
        "tokens": _file_digest(train_tokens),
        "code": result_code.digest(code),
        "versions": [version("torch"), version("lightning")],
    }
    canonical = json.dumps(described, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def group_fingerprint(member_fingerprints: Sequence[str]) -> str:
    """A seed group's fingerprint: its members' (:func:`fingerprint`), in their order.

    A group resumes only its own state: change one member and the group is another.
    """
    joined = ",".join(member_fingerprints)
    return hashlib.sha256(joined.encode()).hexdigest()[:16]


def run_root_from_env(environ: Mapping[str, str] = os.environ) -> Path:
    """``ATTNLAB_RUN_ROOT`` if set, else ``~/.cache/attnlab``, as an absolute path."""
    return Path(environ.get(RUN_ROOT_ENV) or DEFAULT_RUN_ROOT).expanduser().resolve()


def wandb_dir(run_root: Path, environ: Mapping[str, str] = os.environ) -> Path:
    """``WANDB_DIR`` if set, else ``<run root>/wandb``."""
    configured = environ.get("WANDB_DIR")
    return Path(configured).expanduser().resolve() if configured else run_root / "wandb"


def checkpoint_dir(run_root: Path, job: TrainJob, digest: str, group: Sequence[int] = ()) -> Path:
    """``<run root>/checkpoints/<variant>-seed-<seed>-<fingerprint>``: one folder per run.

    A seed group's (``group``: its seeds) is ``<variant>-seeds-<s1>-<s2>...-<fingerprint>``.
    """
    who = f"seeds-{'-'.join(map(str, group))}" if group else seed_label(job.seed)
    return run_root / "checkpoints" / f"{job.variant.name}-{who}-{digest}"
