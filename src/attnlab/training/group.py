"""One Lightning fit's runs: a single run, or a seed group of one variant's seeds.

:func:`attnlab.training.fit.train_group` trains its :class:`Member` s in one fit; this
module says what a member is, how a fit runs (:class:`FitOptions`, the same for a single
run and a group), what one fit is asked (:class:`FitCall`: the members, the options, the
checkpoint folder and fingerprints), and which groups are refused.
"""

from dataclasses import dataclass
from pathlib import Path

import lightning.pytorch as pl

from attnlab.members import MemberCallback
from attnlab.metrics.validation_curve import ValidationCurve
from attnlab.paths import seed_label
from attnlab.training.job import TrainJob


@dataclass(frozen=True)
class Member:
    """One run of a fit: its job, and what it records besides its loss curve.

    Attributes:
        job: The resolved variant, budget, seed and hardware.
        curve: Its ``val/ppl`` curve, drawn by Lightning's validation loop, if any.
        callbacks: Its own Lightning callbacks (the whole-split score; a single run's
            may be any, e.g. a pruner). In a group each must be a :class:`MemberCallback`.
        along: Steps whose weights to keep (:mod:`attnlab.training.along_steps`).
    """

    job: TrainJob
    curve: ValidationCurve | None = None
    callbacks: tuple[pl.Callback, ...] = ()
    along: tuple[int, ...] = ()


def check_members(members: tuple[Member, ...], data: pl.LightningDataModule | None) -> None:
    """Refuse a group that is not one variant under distinct seeds, or that asks too much."""
    if not members:
        raise ValueError("a fit trains at least one run")
    if len(members) == 1:
        return
    first = members[0].job
    if any(m.job.variant != first.variant or m.job.steps != first.steps for m in members):
        raise ValueError("a seed group trains one variant: the members' configurations differ")
    if len({m.job.seed for m in members}) != len(members):
        raise ValueError("a seed group's members need distinct seeds")
    if data is not None:
        raise ValueError("a seed group draws P0's token windows: data is for a single run")
    curves = {None if m.curve is None else repr(m.curve.definition()) for m in members}
    if len(curves) != 1:
        raise ValueError("a seed group's members score the same val/ppl windows, or none")
    if not all(isinstance(cb, MemberCallback) for m in members for cb in m.callbacks):
        raise ValueError("a seed group's callbacks must follow one member (MemberCallback)")


@dataclass(frozen=True)
class FitOptions:
    """Where a fit reads and writes, and how it runs: one value for a single run or a group.

    Attributes:
        train_tokens: The train split (a token Parquet file).
        run_root: Where resume state lives (outside the project; see job.py).
        wandb_folder: The parent of W&B's ``wandb/`` folder.
        resume: Continue from the fit's checkpoint if there is one; False deletes it and
            starts from step 0.
        keep_checkpoint: Keep the final checkpoint (with the optimiser state) instead of
            deleting the resume state after success.
        resumable: Write checkpoints at all. False (a sweep trial, which a retry starts
            afresh) writes none, and removes the run's folder however the fit ends.
        live_progress: Draw a progress bar; None means "when stdout is a terminal".
        project_dir: The checkout whose git revision the runs record (default: cwd).
        data: A single run's batches other than P0's token windows (e.g. the Winograd
            sentences); they must be :class:`StepBatch` es whose step is the global step.
            ``train_tokens`` is then only fingerprinted.
        tags: W&B tags beside the experiment, the variant and the seed (e.g. the study).
    """

    train_tokens: Path
    run_root: Path
    wandb_folder: Path
    resume: bool = True
    keep_checkpoint: bool = False
    resumable: bool = True
    live_progress: bool | None = None
    project_dir: Path | None = None
    data: pl.LightningDataModule | None = None
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class FitCall:
    """What one fit is asked: its members and options, with their fingerprints and folder.

    ``data``: the batches it trains on (``options.data``, else P0's token windows).
    """

    members: tuple[Member, ...]
    options: FitOptions
    folder: Path
    digest: str
    member_digests: tuple[str, ...]
    data: pl.LightningDataModule

    @property
    def resume(self) -> bool:
        """Whether to continue from the checkpoint: asked for, and one may exist."""
        return self.options.resume and self.options.resumable

    @property
    def grouped(self) -> bool:
        """Whether this fit trains a seed group (several members), not one run."""
        return len(self.members) > 1

    @property
    def name(self) -> str:
        """The variant, and in a group its seeds: what the log lines speak of."""
        variant = self.members[0].job.variant.name
        if not self.grouped:
            return variant
        return f"{variant} ({', '.join(seed_label(m.job.seed) for m in self.members)})"

    def member_folder(self, index: int) -> Path:
        """Where member ``index`` keeps its own resume state (its W&B id, its along files)."""
        if not self.grouped:
            return self.folder
        return self.folder / seed_label(self.members[index].job.seed)
