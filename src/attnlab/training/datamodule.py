"""The train split as a Lightning DataModule of seeded step batches (:mod:`attnlab.data.batches`).

Its validation data are the ``val/ppl`` curve's fixed windows
(:class:`~attnlab.metrics.ValidationCurve`), in the same batches at every point.
"""

from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import lightning.pytorch as pl
import torch
from torch import Tensor
from torch.utils.data import DataLoader

from attnlab.data.batches import StepBatches, draw_windows
from attnlab.data.tokens import read_tokens

if TYPE_CHECKING:
    from attnlab.metrics.validation_curve import ValidationCurve
    from attnlab.training.job import TrainJob


class TokenWindows(pl.LightningDataModule):
    """The train split as a stream of seeded step batches, resumable at any step.

    ``train_dataloader`` is built after Lightning restores a checkpoint, so it starts at
    the restored ``trainer.global_step``; each batch carries its step, and the task checks
    it against the step it is about to take.
    """

    @classmethod
    def for_job(
        cls, job: "TrainJob", train_tokens: Path, curve: "ValidationCurve | None" = None
    ) -> "TokenWindows":
        """P0's batches: random windows of the train split, drawn from the run's data seed.

        With a ``curve``, its windows are the validation data, in its batch size.
        """
        return cls(
            train_tokens,
            job.variant.model.block_size,
            job.variant.train.batch_size,
            job.data_seed,
            job.steps,
            job.runtime.num_workers,
            None if curve is None else curve.windows.split(curve.batch_size),
        )

    def __init__(
        self,
        train_path: Path,
        block_size: int,
        batch_size: int,
        seed: int,
        steps: int,
        num_workers: int = 0,
        val_batches: Sequence[Tensor] | None = None,
    ) -> None:
        super().__init__()
        self.train_path = Path(train_path)
        self.block_size = block_size
        self.batch_size = batch_size
        self.seed = seed
        self.steps = steps
        self.num_workers = num_workers
        self.val_batches = list(val_batches or [])  # each (B, T + 1) int64
        self.train_tokens: Tensor | None = None

    def setup(self, stage: str) -> None:
        """Read the train split once (zero-copy from Parquet's buffer)."""
        if self.train_tokens is None:
            self.train_tokens = read_tokens(self.train_path)

    def train_dataloader(self) -> DataLoader:
        """A DataLoader over the steps still to train, for this process's rank."""
        assert self.train_tokens is not None, "setup() reads the tokens first"
        draw = partial(draw_windows, self.train_tokens, self.block_size, self.batch_size, self.seed)
        return StepBatches.loader(draw, self.steps, self.trainer, self.num_workers, self.seed)

    def val_dataloader(self) -> DataLoader:
        """The validation batches, in order; none when the run draws no curve."""
        # A private generator again: iterating a DataLoader draws a base seed, which would
        # otherwise come from the global RNG and shift dropout's stream at every point.
        return DataLoader(self.val_batches, batch_size=None, generator=torch.Generator())
