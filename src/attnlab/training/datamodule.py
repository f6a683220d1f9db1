"""The train split as a Lightning DataModule of seeded step batches (:mod:`attnlab.data.batches`).

Its validation data are the ``val/ppl`` curve's fixed windows
(:class:`~attnlab.metrics.ValidationCurve`), in the same batches at every point. A seed
group's batches stack each member's own windows. On a GPU the whole split moves to the
device once (a few MB), and each step's windows are gathered there.
"""

from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import lightning.pytorch as pl
import torch
from torch import Tensor
from torch.utils.data import DataLoader

from attnlab.data.batches import StepBatches, draw_group_windows, draw_windows
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
    def for_jobs(
        cls,
        jobs: Sequence["TrainJob"],
        train_tokens: Path,
        curve: "ValidationCurve | None" = None,
    ) -> "TokenWindows":
        """P0's batches: random windows of the train split, drawn from each run's data seed.

        ``jobs`` is one run, or a seed group (one variant: the same steps and batch). With
        a ``curve``, its windows are the validation data, in its batch size.
        """
        job = jobs[0]
        return cls(
            train_tokens,
            job.variant.model.block_size,
            job.variant.train.batch_size,
            tuple(member.data_seed for member in jobs),
            job.steps,
            job.runtime.num_workers,
            None if curve is None else curve.batches(),
        )

    def __init__(
        self,
        train_path: Path,
        block_size: int,
        batch_size: int,
        seeds: Sequence[int],
        steps: int,
        num_workers: int = 0,
        val_batches: Sequence[Tensor] | None = None,
    ) -> None:
        super().__init__()
        self.train_path = Path(train_path)
        self.block_size = block_size
        self.batch_size = batch_size
        self.seeds = tuple(seeds)
        self.steps = steps
        self.num_workers = num_workers
        self.val_batches = list(val_batches or [])  # each (B, T + 1) int64
        self.train_tokens: Tensor | None = None

    def setup(self, stage: str) -> None:
        """Read the train split once (zero-copy from Parquet's buffer); onto the GPU if any."""
        if self.train_tokens is not None:
            return
        tokens = read_tokens(self.train_path)
        device = self.trainer.strategy.root_device if self.trainer is not None else None
        if device is not None and device.type == "cuda":
            tokens = tokens.to(torch.int32).to(device)  # CUDA indexes no uint16 tensor
        self.train_tokens = tokens

    def train_dataloader(self) -> DataLoader:
        """A DataLoader over the steps still to train, for this process's rank."""
        tokens = self.train_tokens
        assert tokens is not None, "setup() reads the tokens first"
        if len(self.seeds) == 1:
            draw = partial(draw_windows, tokens, self.block_size, self.batch_size, self.seeds[0])
        else:
            draw = partial(draw_group_windows, tokens, self.block_size, self.batch_size, self.seeds)
        # Worker processes cannot share a GPU's tensors: there the main process draws.
        workers = 0 if tokens.is_cuda else self.num_workers
        return StepBatches.loader(draw, self.steps, self.trainer, workers, self.seeds[0])

    def val_dataloader(self) -> DataLoader:
        """The validation batches, in order; none when the run draws no curve."""
        # A private generator again: iterating a DataLoader draws a base seed, which would
        # otherwise come from the global RNG and shift dropout's stream at every point.
        return DataLoader(self.val_batches, batch_size=None, generator=torch.Generator())
