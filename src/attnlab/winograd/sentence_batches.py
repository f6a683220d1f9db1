"""Training batches of whole Winograd sentences (E16, E17 of docs/catalogue.md).

:class:`WinogradSentences` feeds the shared :class:`~attnlab.training.LanguageModelTask`
the same :class:`~attnlab.data.batches.StepBatch` es P0's token windows do, but each row is one
whole sentence (17 inputs, 17 targets) rather than a random window of a stream, so every
sentence starts at position 0 as it does when scored. The sentences of global step ``s``
are drawn with replacement by a generator seeded with ``(seed, s)`` alone, by P0's own
sampler (:func:`~attnlab.data.batches.draw_rows`, :class:`~attnlab.data.batches.StepBatches`),
so the batches, like P0's, are a pure function of the step, and a resumed run sees exactly
the batches an uninterrupted one sees.
"""

from functools import partial
from pathlib import Path

import lightning.pytorch as pl
from torch import Tensor
from torch.utils.data import DataLoader

from attnlab.data.batches import StepBatch, StepBatches, draw_rows
from attnlab.winograd.task_files import read_sentences


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
    if len(sentences) == 0:
        raise ValueError("no sentences to train on")
    rows = draw_rows(len(sentences), batch_size, seed, step, rank, world_size)  # (B_r,)
    batch = sentences[rows]  # (B_r, L)
    return StepBatch(step, batch[:, :-1], batch[:, 1:])  # (B_r, L-1) each


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
        draw = partial(draw_sentences, self.sentences, self.batch_size, self.seed)
        return StepBatches.loader(draw, self.steps, self.trainer, self.num_workers, self.seed)
