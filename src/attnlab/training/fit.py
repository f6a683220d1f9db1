"""Train one variant end to end: resume or start, fit with Lightning, report, clean up.

This is the ``train`` stage of every trained experiment in docs/catalogue.md, as a library
call: :func:`train_variant` takes a :class:`~attnlab.training.job.TrainJob` and paths,
and returns the trained model, its curve and its metrics. Writing the stage's outputs is
left to the caller (:mod:`attnlab.stages.train`), through :mod:`attnlab.runs`.
The ``val/ppl`` curve, when asked for, is Lightning's validation loop
(:class:`~attnlab.metrics.ValidationCurve`, :mod:`attnlab.training.trainer`).
"""

import logging
import os
import shutil
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lightning.pytorch as pl
import torch
from lightning.pytorch.loggers import WandbLogger
from lightning.pytorch.utilities.exceptions import SIGTERMException
from lightning.pytorch.utilities.rank_zero import rank_zero_only

from attnlab.errors import AttnlabError, DivergedError
from attnlab.metrics.validation_curve import ValidationCurve
from attnlab.models import LanguageModel
from attnlab.paths import seed_label
from attnlab.runs.along_weights import ALONG
from attnlab.training.along_steps import AlongTraining
from attnlab.training.checkpoints import (
    LAST,
    PeriodicCheckpoint,
    RngState,
    checkpoint_step,
    remove_stale_temporaries,
)
from attnlab.training.datamodule import TokenWindows
from attnlab.training.job import TrainJob, checkpoint_dir, fingerprint
from attnlab.training.kernels import should_compile
from attnlab.training.lock import exclusive_run
from attnlab.training.loss_curve import LossCurve
from attnlab.training.memory import tune_malloc
from attnlab.training.progress import Progress
from attnlab.training.quiet import quiet_lightning
from attnlab.training.result import TrainResult, run_metrics
from attnlab.training.signals import DeferredStop, sigint_as_sigterm
from attnlab.training.task import LanguageModelTask
from attnlab.training.tracking import (
    finish_run,
    git_revision,
    replica_group,
    run_name,
    start_run,
)
from attnlab.training.trainer import build_trainer

log = logging.getLogger(__name__)
say = rank_zero_only(log.info)  # one line per run, not one per DDP rank


class TrainingInterrupted(AttnlabError):
    """SIGTERM or SIGINT stopped training at a step boundary, after saving its state.

    Attributes:
        signal_name: ``SIGTERM`` or ``SIGINT``.
    """

    def __init__(self, message: str, signal_name: str) -> None:
        super().__init__(message)
        self.signal_name = signal_name


def _resume_point(folder: Path, digest: str, steps: int, resume: bool) -> tuple[Path | None, int]:
    """The checkpoint to resume from and its step, or (None, 0); says which in the log."""
    path = folder / LAST
    if not resume:
        if path.exists() and rank_zero_only.rank == 0:
            path.unlink()
            say("resume off: removed %s, starting from step 0", path)
        return None, 0
    if not path.exists():
        earlier = folder.exists()
        say(
            "no checkpoint at %s%s: starting from step 0",
            path,
            " (an earlier run stopped before its first checkpoint)" if earlier else "",
        )
        return None, 0
    step = checkpoint_step(path, digest)  # raises CheckpointError naming the file
    say("resuming from %s at step %d of %d", path, step, steps)
    return path, step


def train_variant(
    job: TrainJob,
    train_tokens: Path,
    run_root: Path,
    wandb_folder: Path,
    *,
    resume: bool = True,
    keep_checkpoint: bool = False,
    resumable: bool = True,
    live_progress: bool | None = None,
    project_dir: Path | None = None,
    data: pl.LightningDataModule | None = None,
    curve: ValidationCurve | None = None,
    callbacks: Sequence[pl.Callback] = (),
    tags: Sequence[str] = (),
    along: Sequence[int] = (),
) -> TrainResult:
    """Train ``job``'s variant on the token file ``train_tokens``.

    Only one process at a time trains a configuration: rank 0 holds the lock of the run's
    checkpoint folder (:mod:`attnlab.training.lock`) for the whole fit. The resume state
    of a finished run is left in place, for the caller to remove with
    :meth:`TrainResult.discard_resume_state` once every output is safely written.

    Args:
        job: The resolved variant, budget, seed and hardware.
        train_tokens: The train split (a token Parquet file).
        run_root: Where resume state lives (outside the project; see runs.py).
        wandb_folder: The parent of W&B's ``wandb/`` folder.
        resume: Continue from this configuration's checkpoint if there is one; False
            deletes it and starts from step 0.
        keep_checkpoint: Keep the final checkpoint (with the optimiser state) instead of
            deleting the resume state after success.
        resumable: Write checkpoints at all. False (a sweep trial, which a retry starts
            afresh) writes none, and removes the run's folder however the fit ends.
        live_progress: Draw a progress bar; None means "when stdout is a terminal".
        project_dir: The checkout whose git revision the run records (default: cwd).
        data: Batches other than P0's token windows (e.g. the Winograd sentences); they
            must be :class:`StepBatch` es whose step is the global step. ``train_tokens``
            is then only fingerprinted.
        curve: The ``val/ppl`` curve to draw with Lightning's validation loop over its
            windows (P0's token windows only: ``data`` must then be None).
        callbacks: Extra Lightning callbacks (pruning, the whole-split score), run after
            the loss and validation curves and before the checkpoint and the progress.
        tags: W&B tags beside the experiment and the variant (e.g. the study).
        along: Steps whose weights to keep (:mod:`attnlab.training.along_steps`), written into
            the resume folder and handed back as :attr:`TrainResult.along`; needs
            ``resumable`` (the files must outlive a kill).

    Raises:
        RunLocked: another live process trains this configuration.
        CheckpointError: the checkpoint to resume from is unreadable or foreign.
        DivergedError: a loss, a val/ppl point or a final weight is not finite.
        TrainingInterrupted: SIGTERM or SIGINT stopped training (its state was saved first
            when ``resumable``).
    """
    tune_malloc()  # ~30,000 fewer page faults a step on P0's model (memory.py)
    quiet_lightning()  # banners and known-harmless warnings, not real ones (quiet.py)
    digest = fingerprint(job, train_tokens, curve)
    folder = checkpoint_dir(run_root, job, digest)
    if curve is not None and data is not None:
        raise ValueError("curve: draws from P0's token windows, not from the given data")
    if along and not resumable:
        raise ValueError("along: kept in the resume folder, which a non-resumable fit removes")
    data = data if data is not None else TokenWindows.for_job(job, train_tokens, curve)
    call = _Run(
        job, wandb_folder, folder, digest, resume and resumable, keep_checkpoint, resumable,
        live_progress, project_dir, data, curve, tuple(callbacks), tuple(tags), tuple(along),
    )  # fmt: skip
    with ExitStack() as held:
        if rank_zero_only.rank == 0:  # DDP's other ranks run beside rank 0, not against it
            held.enter_context(exclusive_run(folder))
        if not resumable:
            held.callback(shutil.rmtree, folder, ignore_errors=True)
        return _train(call)


@dataclass(frozen=True)
class _Run:
    """The arguments of one :func:`train_variant` call, with its fingerprint and folder."""

    job: TrainJob
    wandb_folder: Path
    folder: Path
    digest: str
    resume: bool
    keep_checkpoint: bool
    resumable: bool
    live_progress: bool | None
    project_dir: Path | None
    data: pl.LightningDataModule
    curve: ValidationCurve | None
    callbacks: tuple[pl.Callback, ...]
    tags: tuple[str, ...]
    along: tuple[int, ...]


def _train(call: _Run) -> TrainResult:
    """Build the task and the trainer, check the resume point, track, fit, gather."""
    job, folder = call.job, call.folder
    task = _task(job)
    losses = LossCurve(job.runtime.log_every_n_steps)
    trainer = build_trainer(job, _callbacks(call, losses), folder, call.curve)
    compiled = should_compile(job.trainer, job.steps, trainer.strategy.root_device.type)
    if compiled:
        task.use_compiled_step()
    # Lightning's ckpt_path warns and starts over when the file is gone (PITFALLS 7): check it.
    start, first_step = _resume_point(folder, call.digest, job.steps, call.resume)
    folder.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(folder)
    config, revision = _config(call)
    run = _start_tracking(call, trainer, config, revision, resuming=start is not None)
    kernels = "compiled" if compiled else "eager"
    metrics = _tracked_fit(call, trainer, task, losses, start, first_step, run, kernels)
    leader = trainer.is_global_zero
    discard = leader and call.resumable and not call.keep_checkpoint
    return TrainResult(
        model=task.model.cpu(),
        config=config,
        metrics=metrics if leader else {},
        curve=list(losses.points) if leader else [],
        is_global_zero=leader,
        provenance={
            **revision,
            "dvc_experiment": config["dvc_experiment"],
            "wandb_run": run.id if run is not None else None,
        },
        resume_state=folder if discard else None,
        along=folder / ALONG if call.along and leader else None,
    )


def _task(job: TrainJob) -> LanguageModelTask:
    """The variant's freshly initialised model, in the task that trains it with its recipe."""
    # The init seed draws the weights below, then dropout (the global RNG, after init);
    # the batches draw from the data seed alone (TokenWindows.for_job, or the caller's data).
    pl.seed_everything(job.init_seed, verbose=False)
    torch.set_float32_matmul_precision(job.trainer.matmul_precision)
    recipe = job.variant.train
    return LanguageModelTask(
        LanguageModel(job.variant.model),
        recipe.lr,
        (recipe.betas[0], recipe.betas[1]),
        recipe.weight_decay,
        job.warmup_steps,
    )


def _callbacks(call: _Run, losses: LossCurve) -> list[pl.Callback]:
    """Every callback of the fit, in the order their hooks must run."""
    job = call.job
    # Lightning's checkpoint holds no RNG state (PITFALLS 6): RngState resumes dropout's draws.
    ours: list[pl.Callback] = [losses, RngState(), DeferredStop()]
    if call.curve is not None:  # records its point before a pruner or a checkpoint reads it
        ours.append(call.curve)
    every = job.runtime.checkpoint.every_n_train_steps
    saving = [PeriodicCheckpoint(call.folder, every, call.digest)] if call.resumable else []
    if call.along:  # before the checkpoint: a step is kept before it can be resumed past
        saving.insert(0, AlongTraining(call.folder / ALONG, call.along))
    progress = Progress(
        job.variant.name,
        job.tokens_per_step,
        job.runtime.log_every_n_steps,
        losses,
        call.live_progress,
    )
    return [*ours, *call.callbacks, *saving, progress]


def _config(call: _Run) -> tuple[dict[str, Any], dict[str, Any]]:
    """The run's recorded configuration, and the git revision it was trained at."""
    revision = git_revision(call.project_dir or Path.cwd())
    config = {
        **call.job.config(),
        "fingerprint": call.digest,
        **revision,
        "dvc_experiment": os.environ.get("DVC_EXP_NAME"),
    }
    return config, revision


def _start_tracking(
    call: _Run,
    trainer: pl.Trainer,
    config: dict[str, Any],
    revision: dict[str, Any],
    resuming: bool,
) -> Any:
    """Start rank 0's W&B run and log into it; None on the other ranks or with W&B off."""
    if not trainer.is_global_zero:
        return None
    job, variant = call.job, call.job.variant.name
    run = start_run(
        job.runtime.wandb,
        run_name(variant, job.seed, revision["git_commit"]),
        replica_group(variant, config),
        [job.variant.experiment, variant, seed_label(job.seed), *call.tags],
        config,
        call.wandb_folder,
        call.folder,
        resuming,
    )
    if run is not None:
        trainer.loggers = [WandbLogger(experiment=run)]
    return run


def _tracked_fit(
    call: _Run,
    trainer: pl.Trainer,
    task: LanguageModelTask,
    losses: LossCurve,
    start: Path | None,
    first_step: int,
    run: Any,
    kernels: str,
) -> dict[str, Any]:
    """Fit, measure, and finish the W&B run whatever the fit's fate (PITFALLS 5)."""
    job = call.job
    summary: dict[str, Any] | None = None
    exit_code = 1
    try:
        began = time.perf_counter()
        _fit(call, trainer, task, start)
        wall_s = time.perf_counter() - began
        summary = run_metrics(job, trainer, task.model, losses.points, wall_s, first_step)
        summary["kernels"] = kernels
        exit_code = 0
    except DivergedError as err:
        raise DivergedError(
            f"{job.variant.name}: {err} (a lower train.lr, or some train.warmup_steps, may "
            "help); no model or metrics were written"
        ) from None
    finally:
        finish_run(run, summary, exit_code)
    return summary


def _fit(call: _Run, trainer: pl.Trainer, task: LanguageModelTask, start: Path | None) -> None:
    """``trainer.fit``, stopped cleanly by SIGTERM or SIGINT, refusing non-finite weights."""
    with sigint_as_sigterm() as stop:
        try:
            trainer.fit(task, datamodule=call.data, ckpt_path=start)
        except SIGTERMException:
            raise TrainingInterrupted(
                f"{call.job.variant.name}: stopped by {stop.name} at step {trainer.global_step}"
                f"{_rerun_hint(call)}",
                stop.name,
            ) from None
    if not all(torch.isfinite(p).all() for p in task.parameters()):
        raise DivergedError(f"a weight is not finite after step {trainer.global_step}")


def _rerun_hint(call: _Run) -> str:
    """Where a rerun of a stopped fit resumes: the checkpoint's step, which may be earlier.

    A stop during a step's validation keeps the checkpoint before it (PeriodicCheckpoint).
    """
    if not call.resumable:
        return ""
    path = call.folder / LAST
    if not path.exists():
        return "; no checkpoint yet: a rerun starts from step 0"
    return f"; rerun to resume from {path} at step {checkpoint_step(path, call.digest)}"
