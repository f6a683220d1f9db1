"""Training batches of whole Winograd sentences (E16, E17 of docs/catalogue.md).

:class:`WinogradSentences` feeds the shared :class:`~attnlab.training.LanguageModelTask`
the same :class:`~attnlab.training.StepBatch` es P0's token windows do, but each row is one
whole sentence (17 inputs, 17 targets) rather than a random window of a stream, so every
sentence starts at position 0 as it does when scored. The sentences of global step ``s``
are drawn with replacement by a generator seeded with ``(seed, s)`` alone, so the batches,
like P0's, are a pure function of the step, and a resumed run sees exactly the batches an
uninterrupted one sees.
"""

from collections.abc import Iterator
from pathlib import Path

import lightning.pytorch as pl
import torch
from torch import Tensor
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

from attnlab.training.data import StepBatch, step_generator
from attnlab.winograd.data import read_sentences


def draw_sentences(
    sentences: Tensor,
    batch_size: int,
    seed: int,
    step: int,
    rank: int = 0,
    world_size: int = 1,
) -> StepBatch:
    """The sentences of global step ``step`` that process ``rank`` trains on.

    Args:
        sentences: The train split's token ids, (N, 18).
        batch_size: The global batch, split evenly across ranks.
        seed: The run's seed.
        step: The global step (0 for the first optimiser step).
        rank: This process's global rank.
        world_size: The number of processes; must divide ``batch_size``.

    Raises:
        ValueError: the batch does not split across the ranks, or there are no sentences.
    """
    if batch_size % world_size:
        raise ValueError(f"batch_size {batch_size} does not split across {world_size} ranks")
    if len(sentences) == 0:
        raise ValueError("no sentences to train on")
    rows = torch.randint(len(sentences), (batch_size,), generator=step_generator(seed, step))
    per_rank = batch_size // world_size
    rows = rows[rank * per_rank : (rank + 1) * per_rank]  # (B_r,)
    batch = sentences[rows]  # (B_r, L)
    return StepBatch(step, batch[:, :-1], batch[:, 1:])  # (B_r, L-1) each


class _StepSentences(IterableDataset):
    """The batches of steps ``start, ..., stop-1`` for one rank, in order."""

    def __init__(
        self,
        sentences: Tensor,
        batch_size: int,
        seed: int,
        start: int,
        stop: int,
        rank: int,
        world_size: int,
    ) -> None:
        super().__init__()
        self.sentences, self.batch_size, self.seed = sentences, batch_size, seed
        self.start, self.stop, self.rank, self.world_size = start, stop, rank, world_size

    def __iter__(self) -> Iterator[StepBatch]:
        """Yield one batch per step of this worker's share (worker ``w`` of ``n``: ``≡ w``)."""
        worker = get_worker_info()
        first, stride = (0, 1) if worker is None else (worker.id, worker.num_workers)
        for step in range(self.start + first, self.stop, stride):
            yield draw_sentences(
                self.sentences, self.batch_size, self.seed, step, self.rank, self.world_size
            )


class WinogradSentences(pl.LightningDataModule):
    """The train split of a task file as seeded step batches of whole sentences.

    ``train_dataloader`` is built after Lightning restores a checkpoint, so it starts at
    the restored ``trainer.global_step``.
    """

    def __init__(
        self, path: Path, batch_size: int, seed: int, steps: int, num_workers: int = 0
    ) -> None:
        super().__init__()
        self.path = Path(path)
        self.batch_size, self.seed, self.steps = batch_size, seed, steps
        self.num_workers = num_workers
        self.sentences: Tensor | None = None

    def setup(self, stage: str) -> None:
        """Read the train split once."""
        if self.sentences is None:
            self.sentences = read_sentences(self.path, "train")

    def train_dataloader(self) -> DataLoader:
        """A DataLoader over the steps still to train, for this process's rank."""
        assert self.sentences is not None, "setup() reads the sentences first"
        trainer = self.trainer
        batches = _StepSentences(
            self.sentences,
            self.batch_size,
            self.seed,
            trainer.global_step if trainer is not None else 0,
            self.steps,
            trainer.global_rank if trainer is not None else 0,
            trainer.world_size if trainer is not None else 1,
        )
        # batch_size=None: each item is a batch. The private generator keeps the
        # DataLoader off the global RNG, whose state the checkpoint restores.
        return DataLoader(
            batches,
            batch_size=None,
            num_workers=self.num_workers,
            generator=torch.Generator().manual_seed(self.seed),
        )
