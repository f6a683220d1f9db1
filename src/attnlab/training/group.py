"""One Lightning fit's runs: a single run, or a seed group of one variant's seeds.

:func:`attnlab.training.fit.train_group` trains its :class:`Member` s in one fit; this
module says what a member is, what one fit is asked (:class:`FitCall`: the members, the
fit's options, the checkpoint folder and fingerprints), and which groups are refused.
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
class FitCall:
    """What one fit is asked: its members and options, with their fingerprints and folder."""

    members: tuple[Member, ...]
    wandb_folder: Path
    folder: Path
    digest: str
    member_digests: tuple[str, ...]
    resume: bool
    keep_checkpoint: bool
    resumable: bool
    live_progress: bool | None
    project_dir: Path | None
    data: pl.LightningDataModule
    tags: tuple[str, ...]

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
