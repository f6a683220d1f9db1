"""What one fit is built from: the task with each member's model, the callbacks in order.

:func:`attnlab.training.fit.train_group` builds these for its :class:`FitCall`: a
:class:`~attnlab.training.task.LanguageModelTask` whose members are initialised as their
single runs are, and the Lightning callbacks, each member's own (its curves, its callbacks,
its along-training weights) bound to it in a seed group.
"""

from collections.abc import Sequence

import lightning.pytorch as pl
import torch

from attnlab.members import MemberCallback
from attnlab.models import LanguageModel
from attnlab.runs.along_weights import ALONG
from attnlab.training.along_steps import AlongTraining
from attnlab.training.checkpoints import PeriodicCheckpoint, RngState
from attnlab.training.group import FitCall
from attnlab.training.job import TrainJob
from attnlab.training.loss_curve import LossCurve
from attnlab.training.progress import Progress
from attnlab.training.signals import DeferredStop
from attnlab.training.task import LanguageModelTask, MemberRandomness


def build_task(jobs: Sequence[TrainJob]) -> LanguageModelTask:
    """Each run's freshly initialised model, in the task that trains them with the recipe."""
    # A run's init seed draws its weights below, then its dropout (the global RNG after
    # init: MemberRandomness keeps each member's); the batches draw from the data seed
    # alone (TokenWindows.for_jobs, or the caller's data).
    models, randomness = [], MemberRandomness()
    for job in jobs:
        pl.seed_everything(job.init_seed, verbose=False)
        models.append(LanguageModel(job.variant.model))
        randomness.capture()
    job = jobs[0]
    torch.set_float32_matmul_precision(job.trainer.matmul_precision)
    recipe = job.variant.train
    return LanguageModelTask(
        models,
        recipe.lr,
        (recipe.betas[0], recipe.betas[1]),
        recipe.weight_decay,
        job.warmup_steps,
        randomness,
    )


def member_callbacks(call: FitCall, index: int, losses: LossCurve) -> list[pl.Callback]:
    """The callbacks that follow member ``index``: its curves, its own, its along weights."""
    member = call.members[index]
    curve = [member.curve] if member.curve is not None else []
    along = [AlongTraining(call.member_folder(index) / ALONG, member.along)] if member.along else []
    own = [losses, *curve, *member.callbacks, *along]
    if call.grouped:
        for callback in own:
            assert isinstance(callback, MemberCallback)  # check_members saw to it
            callback.bind(index)
    return own


def fit_callbacks(
    call: FitCall, losses: list[LossCurve], own: list[list[pl.Callback]]
) -> list[pl.Callback]:
    """Every callback of the fit, in the order their hooks must run."""
    job = call.members[0].job
    # Lightning's checkpoint holds no RNG state (PITFALLS 6): RngState resumes dropout's draws.
    ours: list[pl.Callback] = [*losses, RngState(), DeferredStop()]
    # A curve records its point before a pruner or a checkpoint reads it.
    ours += [member.curve for member in call.members if member.curve is not None]
    every = job.runtime.checkpoint.every_n_train_steps
    saving = [PeriodicCheckpoint(call.folder, every, call.digest)] if call.options.resumable else []
    # Before the checkpoint: a step is kept before it can be resumed past.
    along = [cb for callbacks in own for cb in callbacks if isinstance(cb, AlongTraining)]
    progress = Progress(
        call.name,
        job.tokens_per_step * len(call.members),
        job.runtime.log_every_n_steps,
        losses[0],
        call.options.live_progress,
    )
    extra = [callback for member in call.members for callback in member.callbacks]
    return [*ours, *extra, *along, *saving, progress]
