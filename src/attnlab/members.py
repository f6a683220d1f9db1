"""Callbacks that follow one member of a seed group trained in one Lightning fit.

Several seeds of one variant can train together in one process
(:func:`attnlab.training.fit.train_group`): the task holds one model per seed (its
``members``), each step trains all of them, and each member still has its own curves,
W&B run and along-training weights. A callback that records one run's view derives from
:class:`MemberCallback`: alone in its fit it reads the task and the trainer's loggers as
before; bound to a member (:meth:`MemberCallback.bind`) it reads that member's model, its
metrics (:func:`member_metric`) and its own loggers, and keeps its state in the group's
checkpoint under a key of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import lightning.pytorch as pl
from lightning.pytorch.loggers import Logger
from torch import nn


def member_metric(name: str, index: int | None) -> str:
    """The key of metric ``name`` of member ``index`` (``name`` itself for a lone run)."""
    return name if index is None else f"{name}[{index}]"


class MemberCallback(pl.Callback):
    """A callback of one run; in a seed group, of one member of it.

    Attributes:
        member: The member's index in the task's ``members``; None for a fit of one run.
    """

    member: int | None = None
    _loggers: tuple[Logger, ...] | None = None

    def bind(self, member: int, loggers: Sequence[Logger] = ()) -> None:
        """Follow member ``member`` of a group, logging into ``loggers`` (its W&B run).

        A member is bound before the Trainer sees its callbacks (their state keys must
        differ from the start), then again with its loggers once its W&B run exists.
        """
        self.member = member
        self._loggers = tuple(loggers)

    @property
    def state_key(self) -> str:
        """One key per member: a group's checkpoint holds each member's state apart."""
        if self.member is None:
            return super().state_key
        return self._generate_state_key(member=self.member)

    def loggers(self, trainer: pl.Trainer) -> Sequence[Logger]:
        """Where this run's values go: its member's loggers, else the trainer's."""
        return trainer.loggers if self._loggers is None else self._loggers

    def metric(self, name: str) -> str:
        """The key under which the task logs this run's ``name``."""
        return member_metric(name, self.member)

    def model(self, pl_module: Any) -> nn.Module:
        """This run's model: its member of the task's ``members``."""
        return pl_module.members[self.member or 0]
