"""The model's weights kept at log-spaced steps of training, with a hash manifest (E09, E11).

E09 asks whether the undivided head "runs away and stays collapsed", E11 whether the
gradient "grows with depth": both read off a curve over training, not two points. The
catalogue says which experiments measure along training (``along``); their runs keep the
weights (no optimiser state) at :func:`along_steps`: step 0, the budget-scaled powers of
two below the variant's steps, and the last step.

During the fit :class:`AlongTraining` writes ``step-NNNNNN.pt`` into the run's resume
folder (outside the project: DVC deletes a stage's outputs before it reruns one, and a
killed run must keep what it wrote). A resumed run trains bit for bit as an uninterrupted
one (:mod:`attnlab.training.checkpoints`), so a step it trains again is written again with
the same bytes. Once the fit ends, :func:`attnlab.runs.along_weights.keep_along` copies
the files into the model folder (``along/``) with ``manifest.json``: each file's step and
SHA-256, which :func:`~attnlab.runs.along_weights.read_along` checks before anything is
measured on a file.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import lightning.pytorch as pl

from attnlab.config.variants import BudgetParams
from attnlab.files import write_atomically
from attnlab.members import MemberCallback
from attnlab.runs.along_weights import step_file
from attnlab.runs.model_folder import weights_bytes
from attnlab.training.job import TrainJob


def along_steps(job: TrainJob) -> tuple[int, ...]:
    """The steps whose weights a run keeps: 0, the scaled powers of two, the last step.

    The powers of two are those below the variant's steps, each scaled by the budget like
    every step count (never below 1). At the story's budget and 3000 steps: 0, 1, 2, 4,
    ..., 2048, 3000; at a smaller one the powers that round to the same step count once.
    """
    budget = BudgetParams(scale=job.budget_scale)
    full = job.variant.train.steps  # the variant's steps at the story's budget
    powers = [2**k for k in range(full.bit_length()) if 2**k < full]
    kept = {0, job.steps, *(budget.steps(power) for power in powers)}
    return tuple(sorted(step for step in kept if step <= job.steps))


class AlongTraining(MemberCallback):
    """Write the model's weights at each of ``steps`` into ``folder`` (rank 0 alone).

    Step 0 is written when training starts from scratch, every other step at the end of
    the batch that completes it. Nothing here draws from an RNG or touches the model, so
    a run that keeps these files trains exactly as one that does not.

    Args:
        folder: Where the files go (``<resume folder>/along``).
        steps: The global steps to keep (:func:`along_steps`).
    """

    def __init__(self, folder: Path, steps: Sequence[int]) -> None:
        self.folder = Path(folder)
        self.steps = frozenset(steps)
        self._written: int | None = None  # gradient accumulation repeats a global step

    def _keep(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        step = trainer.global_step
        if step in self.steps and step != self._written and trainer.is_global_zero:
            write_atomically(self.folder / step_file(step), weights_bytes(self.model(pl_module)))
            self._written = step

    def on_train_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        """Keep the initial weights (a resumed run starts past step 0 and keeps nothing here)."""
        if trainer.global_step == 0:
            self._keep(trainer, pl_module)

    def on_train_batch_end(
        self,
        trainer: pl.Trainer,
        pl_module: pl.LightningModule,
        outputs: Any,
        batch: Any,
        batch_idx: int,
    ) -> None:
        """Keep the weights when the step just completed is one of ``steps``."""
        self._keep(trainer, pl_module)
