"""Train one variant end to end: resume or start, fit with Lightning, report, clean up.

This is the ``train`` stage of every trained experiment in docs/catalogue.md, as a library
call: :func:`train_variant` takes a :class:`~attnlab.training.job.TrainJob` and paths,
and returns the trained model, its curve and its metrics. Writing the stage's outputs is
left to the caller (:mod:`attnlab.stages.train`), through :mod:`attnlab.runs`.
The ``val/ppl`` curve, when asked for, is Lightning's validation loop
(:class:`~attnlab.metrics.ValidationCurve`, :mod:`attnlab.training.trainer`).

:func:`train_group` trains several seeds of one variant in one fit, a *seed group*: one
process, one Trainer, one checkpoint, and per member what its single run has (its
initial weights, batches and dropout stream, its curves, its W&B run, its along-training
weights, its result). Each member trains as its single run does (:mod:`.task`); what a
group saves is the fixed cost of a process per run, and on a GPU the idle time between
one small model's kernels. A single run is a group of one.
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
from attnlab.members import MemberCallback
from attnlab.metrics.validation_curve import ValidationCurve
from attnlab.mkl_avx512 import fp32_matmul_path
from attnlab.paths import seed_label
from attnlab.runs.along_weights import ALONG
from attnlab.training.checkpoints import (
    LAST,
    checkpoint_step,
    remove_stale_temporaries,
    resume_point,
)
from attnlab.training.datamodule import TokenWindows
from attnlab.training.fit_parts import build_task, fit_callbacks, member_callbacks
from attnlab.training.group import FitCall, FitOptions, Member, check_members
from attnlab.training.job import TrainJob, checkpoint_dir, fingerprint, group_fingerprint
from attnlab.training.kernels import should_compile
from attnlab.training.lock import exclusive_run
from attnlab.training.loss_curve import LossCurve
from attnlab.training.memory import tune_malloc
from attnlab.training.quiet import quiet_lightning
from attnlab.training.result import TrainResult, run_metrics
from attnlab.training.signals import sigint_as_sigterm
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


def train_variant(
    job: TrainJob,
    options: FitOptions,
    *,
    curve: ValidationCurve | None = None,
    callbacks: Sequence[pl.Callback] = (),
    along: Sequence[int] = (),
) -> TrainResult:
    """Train ``job``'s variant as ``options`` say: a group of one.

    Args:
        job: The resolved variant, budget, seed and hardware.
        options: Where the fit reads and writes, and how it runs.
        curve: The ``val/ppl`` curve to draw with Lightning's validation loop over its
            windows (P0's token windows only: ``options.data`` must then be None).
        callbacks: Extra Lightning callbacks (pruning, the whole-split score), run after
            the loss and validation curves and before the checkpoint and the progress.
        along: Steps whose weights to keep, handed back as :attr:`TrainResult.along`;
            needs ``options.resumable`` (the files must outlive a kill).

    Raises:
        As :func:`train_group`.
    """
    (result,) = train_group([Member(job, curve, tuple(callbacks), tuple(along))], options)
    return result


def train_group(members: Sequence[Member], options: FitOptions) -> list[TrainResult]:
    """Train the seeds of one variant together, in one Lightning fit; a result per member.

    Only one process at a time trains a configuration: rank 0 holds the lock of the
    group's checkpoint folder (:mod:`attnlab.training.lock`) for the whole fit. The
    folder is named after the fingerprints of all members, so a group resumes only the
    state it wrote: a member whose configuration changed makes another group, which
    starts from step 0. The resume state of a finished fit is left in place, for the
    caller to remove with :meth:`TrainResult.discard_resume_state` once every output is
    safely written.

    Args:
        members: The runs, one variant under distinct seeds (the same steps and batch).
        options: Where the fit reads and writes, and how it runs (:class:`FitOptions`).

    Raises:
        ValueError: the members are not one variant under distinct seeds, or a group
            is asked for what only a single run does.
        RunLocked: another live process trains this configuration.
        CheckpointError: the checkpoint to resume from is unreadable or foreign.
        DivergedError: a loss, a val/ppl point or a final weight is not finite.
        TrainingInterrupted: SIGTERM or SIGINT stopped training (its state was saved first
            when ``options.resumable``).
    """
    tune_malloc()  # ~30,000 fewer page faults a step on P0's model (memory.py)
    quiet_lightning()  # banners and known-harmless warnings, not real ones (quiet.py)
    members = tuple(members)
    check_members(members, options.data)
    if any(m.along for m in members) and not options.resumable:
        raise ValueError("along: kept in the resume folder, which a non-resumable fit removes")
    if options.data is not None and any(m.curve is not None for m in members):
        raise ValueError("curve: draws from P0's token windows, not from the given data")
    jobs = [member.job for member in members]
    digests = tuple(fingerprint(m.job, options.train_tokens, m.curve) for m in members)
    if len(members) == 1:
        digest, folder = digests[0], checkpoint_dir(options.run_root, jobs[0], digests[0])
    else:
        digest = group_fingerprint(digests)
        seeds = [job.seed for job in jobs]
        folder = checkpoint_dir(options.run_root, jobs[0], digest, seeds)
    curve = members[0].curve  # the windows and cadence of every member's curve
    data = options.data
    if data is None:
        data = TokenWindows.for_jobs(jobs, options.train_tokens, curve)
    call = FitCall(members, options, folder, digest, digests, data)
    with ExitStack() as held:
        if rank_zero_only.rank == 0:  # DDP's other ranks run beside rank 0, not against it
            held.enter_context(exclusive_run(folder))
        if not options.resumable:
            held.callback(shutil.rmtree, folder, ignore_errors=True)
        return _train(call)


def _train(call: FitCall) -> list[TrainResult]:
    """Build the task and the trainer, check the resume point, track, fit, gather."""
    jobs = [member.job for member in call.members]
    job, folder = jobs[0], call.folder
    task = build_task(jobs)
    losses = [LossCurve(job.runtime.log_every_n_steps) for _ in call.members]
    own = [member_callbacks(call, i, losses[i]) for i in range(len(call.members))]
    trainer = build_trainer(job, fit_callbacks(call, losses, own), folder, call.members[0].curve)
    compiled = should_compile(job.trainer, job.steps, trainer.strategy.root_device.type)
    if compiled:
        task.use_compiled_step()
    # Lightning's ckpt_path warns and starts over when the file is gone (PITFALLS 7): check it.
    start, first_step = resume_point(folder, call.digest, job.steps, call.resume)
    folder.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(folder)
    revision = git_revision(call.options.project_dir or Path.cwd())
    configs = [_config(call, i, revision) for i in range(len(call.members))]
    runs = _start_tracking(call, trainer, configs, own, resuming=start is not None)
    # Which kernels trained it: the step's, and oneMKL's for the fp32 products (mkl_avx512.py).
    kernels = {"step": "compiled" if compiled else "eager", "fp32_matmul": fp32_matmul_path()}
    fit = _FitParts(trainer, task, losses, runs)
    metrics = _tracked_fit(call, fit, start, first_step, kernels)
    leader = trainer.is_global_zero
    discard = leader and call.options.resumable and not call.options.keep_checkpoint
    return [
        TrainResult(
            model=task.members[i].cpu(),
            config=configs[i],
            metrics=metrics[i] if leader else {},
            curve=list(losses[i].points) if leader else [],
            is_global_zero=leader,
            provenance={
                **revision,
                "dvc_experiment": configs[i]["dvc_experiment"],
                "wandb_run": runs[i].id if runs[i] is not None else None,
            },
            resume_state=folder if discard else None,
            along=call.member_folder(i) / ALONG if member.along and leader else None,
        )
        for i, member in enumerate(call.members)
    ]


def _config(call: FitCall, index: int, revision: dict[str, Any]) -> dict[str, Any]:
    """Member ``index``'s recorded configuration, at the git revision it was trained at."""
    return {
        **call.members[index].job.config(),
        "fingerprint": call.member_digests[index],
        **revision,
        "dvc_experiment": os.environ.get("DVC_EXP_NAME"),
    }


def _start_tracking(
    call: FitCall,
    trainer: pl.Trainer,
    configs: list[dict[str, Any]],
    own: list[list[pl.Callback]],
    resuming: bool,
) -> list[Any]:
    """Start rank 0's W&B run of each member and log into it; None for each elsewhere.

    A single run logs through the trainer's logger; a group member through its own
    callbacks (each bound to its member and its run).
    """
    if not trainer.is_global_zero:
        return [None] * len(call.members)
    runs = []
    for i, member in enumerate(call.members):
        job, variant = member.job, member.job.variant.name
        run = start_run(
            job.runtime.wandb,
            run_name(variant, job.seed, configs[i]["git_commit"]),
            replica_group(variant, configs[i]),
            [job.variant.experiment, variant, seed_label(job.seed), *call.options.tags],
            configs[i],
            call.options.wandb_folder,
            call.member_folder(i),
            resuming,
        )
        loggers = [WandbLogger(experiment=run)] if run is not None else []
        if not call.grouped:
            trainer.loggers = loggers
        else:
            for callback in own[i]:
                assert isinstance(callback, MemberCallback)  # check_members saw to it
                callback.bind(i, loggers)
        runs.append(run)
    return runs


@dataclass(frozen=True)
class _FitParts:
    """What one fit is made of: the trainer, the task, each member's curve and W&B run."""

    trainer: pl.Trainer
    task: LanguageModelTask
    losses: list[LossCurve]
    runs: list[Any]


def _tracked_fit(
    call: FitCall, fit: _FitParts, start: Path | None, first_step: int, kernels: dict[str, str]
) -> list[dict[str, Any]]:
    """Fit, measure each member, and finish every W&B run whatever the fit's fate (PITFALLS 5)."""
    summaries: list[dict[str, Any]] = []
    exit_code = 1
    try:
        began = time.perf_counter()
        _fit(call, fit.trainer, fit.task, start)
        wall_s = time.perf_counter() - began
        for i, member in enumerate(call.members):
            summary = run_metrics(
                member.job, fit.trainer, fit.task.members[i], fit.losses[i].points, wall_s,
                first_step,
            )  # fmt: skip
            summary["kernels"] = kernels
            summary["group_seeds"] = [m.job.seed for m in call.members]
            summaries.append(summary)
        exit_code = 0
    except DivergedError as err:
        raise DivergedError(
            f"{call.name}: {err} (a lower train.lr, or some train.warmup_steps, may "
            "help); no model or metrics were written"
        ) from None
    finally:
        for i, run in enumerate(fit.runs):
            finish_run(run, summaries[i] if exit_code == 0 else None, exit_code)
    return summaries


def _fit(call: FitCall, trainer: pl.Trainer, task: LanguageModelTask, start: Path | None) -> None:
    """``trainer.fit``, stopped cleanly by SIGTERM or SIGINT, refusing non-finite weights."""
    with sigint_as_sigterm() as stop:
        try:
            trainer.fit(task, datamodule=call.data, ckpt_path=start)
        except SIGTERMException:
            raise TrainingInterrupted(
                f"{call.name}: stopped by {stop.name} at step {trainer.global_step}"
                f"{_rerun_hint(call)}",
                stop.name,
            ) from None
    if not all(torch.isfinite(p).all() for p in task.parameters()):
        raise DivergedError(f"a weight is not finite after step {trainer.global_step}")


def _rerun_hint(call: FitCall) -> str:
    """Where a rerun of a stopped fit resumes: the checkpoint's step, which may be earlier.

    A stop during a step's validation keeps the checkpoint before it (PeriodicCheckpoint).
    """
    if not call.options.resumable:
        return ""
    path = call.folder / LAST
    if not path.exists():
        return "; no checkpoint yet: a rerun starts from step 0"
    return f"; rerun to resume from {path} at step {checkpoint_step(path, call.digest)}"
