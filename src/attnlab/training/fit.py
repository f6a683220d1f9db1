"""Train one variant end to end: resume or start, fit with Lightning, report, clean up.

This is the ``train`` stage of every trained experiment in docs/catalogue.md, as a library
call: :func:`train_variant` takes a :class:`~attnlab.training.runs.TrainJob` and paths,
and returns the trained model, its curve and its metrics. Writing the stage's outputs is
left to the caller (:mod:`attnlab.stages.train`), through :mod:`attnlab.training.artifacts`.

Adding validation points during training later: give :class:`TokenWindows` a
``val_dataloader`` over the validation split, :class:`LanguageModelTask` a
``validation_step`` returning the loss, and pass ``val_check_interval`` to the Trainer
below; the train batches and the resume guarantees are unaffected.
"""

import logging
import os
import shutil
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import lightning.pytorch as pl
import torch
from lightning.pytorch.loggers import WandbLogger
from lightning.pytorch.utilities.exceptions import MisconfigurationException, SIGTERMException
from lightning.pytorch.utilities.rank_zero import rank_zero_only

from attnlab.errors import AttnlabError, DivergedError, ParamsError
from attnlab.models import LanguageModel
from attnlab.paths import seed_label
from attnlab.training.artifacts import final_loss
from attnlab.training.checkpoints import (
    LAST,
    AtomicCheckpointIO,
    PeriodicCheckpoint,
    RngState,
    checkpoint_step,
    remove_stale_temporaries,
)
from attnlab.training.curve import LOSS, LossCurve
from attnlab.training.datamodule import TokenWindows
from attnlab.training.kernels import should_compile
from attnlab.training.lock import RunLocked, exclusive_run
from attnlab.training.memory import tune_malloc
from attnlab.training.progress import Progress
from attnlab.training.quiet import quiet_lightning
from attnlab.training.runs import TrainJob, checkpoint_dir, fingerprint
from attnlab.training.signals import sigint_as_sigterm
from attnlab.training.task import LanguageModelTask
from attnlab.training.tracking import (
    finish_run,
    git_revision,
    replica_group,
    run_name,
    start_run,
)

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


@dataclass
class TrainResult:
    """The outcome of :func:`train_variant` in this process.

    Only the process with ``is_global_zero`` writes outputs; in the other DDP ranks
    ``metrics`` and ``curve`` are empty. ``provenance`` says where the numbers came from:
    the baseline commit, whether the checkout differed, the DVC experiment and the W&B
    run (None when W&B was off).
    """

    model: LanguageModel
    config: dict[str, Any]
    metrics: dict[str, Any]
    curve: list[tuple[int, float]]
    is_global_zero: bool
    provenance: dict[str, Any] = field(default_factory=dict)
    resume_state: Path | None = None

    def discard_resume_state(self) -> None:
        """Remove the finished run's resume state; call it once every output is written.

        Until then a failed write (a full disk) can be retried by rerunning the stage,
        which resumes at the last step instead of training again. The folder is left
        alone while another process holds its lock: that process owns it now.
        """
        folder = self.resume_state
        if folder is None:
            return
        try:
            with exclusive_run(folder):
                shutil.rmtree(folder, ignore_errors=True)
        except RunLocked:
            say("left %s in place: another trainer of this configuration holds it", folder)
        self.resume_state = None


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


def _trainer(job: TrainJob, callbacks: list[pl.Callback], root: Path) -> pl.Trainer:
    """Lightning's Trainer for ``job``, or a ParamsError naming the hardware it lacks."""
    hardware = job.trainer
    try:
        return _lightning_trainer(job, callbacks, root)
    except MisconfigurationException as err:  # e.g. accelerator: gpu on a machine without
        raise ParamsError(
            f"trainer: accelerator={hardware.accelerator!r} devices={hardware.devices!r} "
            f"strategy={hardware.strategy!r} cannot run here: {err}"
        ) from None


def _lightning_trainer(job: TrainJob, callbacks: list[pl.Callback], root: Path) -> pl.Trainer:
    hardware = job.trainer
    return pl.Trainer(
        accelerator=hardware.accelerator,
        devices=hardware.devices,
        num_nodes=hardware.num_nodes,
        strategy=hardware.strategy,
        precision=hardware.precision,
        max_steps=job.steps,
        max_epochs=-1,
        logger=False,  # the W&B logger is attached on rank 0 only, once ranks are known
        callbacks=callbacks,
        plugins=[AtomicCheckpointIO()],
        enable_checkpointing=False,  # PeriodicCheckpoint, not ModelCheckpoint
        enable_progress_bar=False,  # Progress, which adds no host sync
        enable_model_summary=False,
        use_distributed_sampler=False,  # ranks slice the step's batch themselves
        num_sanity_val_steps=0,
        default_root_dir=root,
    )


def _device(trainer: pl.Trainer) -> str:
    device = trainer.strategy.root_device
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else None
    return f"{device.type} ({name})" if name else device.type


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
    callbacks: Sequence[pl.Callback] = (),
    tags: Sequence[str] = (),
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
        callbacks: Extra Lightning callbacks (validation points, pruning), run after the
            loss curve is flushed and before progress is reported.
        tags: W&B tags beside the experiment and the variant (e.g. the study).

    Raises:
        RunLocked: another live process trains this configuration.
        CheckpointError: the checkpoint to resume from is unreadable or foreign.
        DivergedError: a loss, a val/ppl point or a final weight is not finite.
        TrainingInterrupted: SIGTERM or SIGINT stopped training (its state was saved first
            when ``resumable``).
    """
    tune_malloc()  # ~30,000 fewer page faults a step on P0's model (memory.py)
    quiet_lightning()  # banners and known-harmless warnings, not real ones (quiet.py)
    digest = fingerprint(job, train_tokens)
    folder = checkpoint_dir(run_root, job, digest)
    call = _Run(
        job, train_tokens, wandb_folder, folder, digest, resume and resumable,
        keep_checkpoint, resumable, live_progress, project_dir, data, tuple(callbacks), tuple(tags),
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
    train_tokens: Path
    wandb_folder: Path
    folder: Path
    digest: str
    resume: bool
    keep_checkpoint: bool
    resumable: bool
    live_progress: bool | None
    project_dir: Path | None
    data: pl.LightningDataModule | None
    callbacks: tuple[pl.Callback, ...]
    tags: tuple[str, ...]


def _train(call: _Run) -> TrainResult:
    job, folder, digest = call.job, call.folder, call.digest
    # The init seed draws the weights below, then dropout (the global RNG, after init);
    # the batches draw from the data seed alone (TokenWindows.for_job, or the caller's data).
    pl.seed_everything(job.init_seed, verbose=False)
    torch.set_float32_matmul_precision(job.trainer.matmul_precision)
    model = LanguageModel(job.variant.model)
    recipe = job.variant.train
    task = LanguageModelTask(
        model, recipe.lr, (recipe.betas[0], recipe.betas[1]), recipe.weight_decay, job.warmup_steps
    )
    data = call.data if call.data is not None else TokenWindows.for_job(job, call.train_tokens)
    curve = LossCurve(job.runtime.log_every_n_steps)
    every = job.runtime.checkpoint.every_n_train_steps
    saving = [PeriodicCheckpoint(folder, every, digest)]
    progress = Progress(
        job.variant.name,
        job.tokens_per_step,
        job.runtime.log_every_n_steps,
        curve,
        call.live_progress,
    )
    trainer = _trainer(
        job, [curve, RngState(), *call.callbacks, *saving[: call.resumable], progress], folder
    )
    if recipe.batch_size % trainer.world_size:
        raise ParamsError(
            f"variants.{job.variant.name}.train.batch_size: {recipe.batch_size} windows do not "
            f"split evenly across {trainer.world_size} processes"
        )
    compiled = should_compile(job.trainer, job.steps, trainer.strategy.root_device.type)
    if compiled:
        task.use_compiled_step()
    start, first_step = _resume_point(folder, digest, job.steps, call.resume)
    folder.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(folder)
    revision = git_revision(call.project_dir or Path.cwd())
    config = {
        **job.config(),
        "fingerprint": digest,
        **revision,
        "dvc_experiment": os.environ.get("DVC_EXP_NAME"),
    }
    run = None
    if trainer.is_global_zero:
        variant = job.variant.name
        run = start_run(
            job.runtime.wandb,
            run_name(variant, job.seed, revision["git_commit"]),
            replica_group(variant, config),
            [job.variant.experiment, variant, seed_label(job.seed), *call.tags],
            config,
            call.wandb_folder,
        )
    if run is not None:
        trainer.loggers = [WandbLogger(experiment=run)]

    summary: dict[str, Any] | None = None
    exit_code = 1
    try:
        began = time.perf_counter()
        _fit(trainer, task, data, start, job.variant.name, folder if call.resumable else None)
        wall_s = time.perf_counter() - began
        metrics = _metrics(job, trainer, model, curve.points, wall_s, first_step)
        metrics["kernels"] = "compiled" if compiled else "eager"
        summary = metrics
        exit_code = 0
    except DivergedError as err:
        raise DivergedError(
            f"{job.variant.name}: {err} (a lower train.lr, or some train.warmup_steps, may "
            "help); no model or metrics were written"
        ) from None
    finally:
        finish_run(run, summary, exit_code)

    discard = trainer.is_global_zero and call.resumable and not call.keep_checkpoint
    return TrainResult(
        model=model.cpu(),
        config=config,
        metrics=metrics if trainer.is_global_zero else {},
        curve=list(curve.points) if trainer.is_global_zero else [],
        is_global_zero=trainer.is_global_zero,
        provenance={
            **revision,
            "dvc_experiment": config["dvc_experiment"],
            "wandb_run": run.id if run is not None else None,
        },
        resume_state=folder if discard else None,
    )


def _fit(
    trainer: pl.Trainer,
    task: LanguageModelTask,
    data: pl.LightningDataModule,
    start: Path | None,
    name: str,
    folder: Path | None,
) -> None:
    """``trainer.fit``, stopped cleanly by SIGTERM or SIGINT, refusing non-finite weights.

    ``folder`` is the resume state's folder, None when the run writes none.
    """
    with sigint_as_sigterm() as stop:
        try:
            trainer.fit(task, datamodule=data, ckpt_path=start)
        except SIGTERMException:
            then = f"; rerun to resume from {folder / LAST}" if folder else ""
            raise TrainingInterrupted(
                f"{name}: stopped by {stop.name} at step {trainer.global_step}{then}", stop.name
            ) from None
    if not all(torch.isfinite(p).all() for p in task.parameters()):
        raise DivergedError(f"a weight is not finite after step {trainer.global_step}")


def _metrics(
    job: TrainJob,
    trainer: pl.Trainer,
    model: LanguageModel,
    points: list[tuple[int, float]],
    wall_s: float,
    first_step: int,
) -> dict[str, Any]:
    """The stage's metrics: ``train/loss`` is the mean over the last 5 % of steps."""
    loss, window = final_loss(points)
    trained = (job.steps - first_step) * job.tokens_per_step
    return {
        LOSS: loss,
        "train/loss_window": window,
        **job.seeds(),
        "steps": job.steps,
        "tokens_seen": job.steps * job.tokens_per_step,
        "wall_s": round(wall_s, 3),
        "tokens_per_s": round(trained / wall_s, 1) if wall_s > 0 else 0.0,
        "resumed_from_step": first_step,
        "params": sum(p.numel() for p in model.parameters()),
        "device": _device(trainer),
        "world_size": trainer.world_size,
        "precision": job.trainer.precision,
    }
