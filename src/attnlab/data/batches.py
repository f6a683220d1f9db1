"""Training batches as a pure function of (seed, step, rank) (P0 of docs/catalogue.md).

P0 trains on random windows of ``block_size + 1`` tokens from the train split. Here the
windows of global step ``s`` come from a ``torch.Generator`` seeded with ``(seed, s)``
alone, so the batch a step sees does not depend on how the run got there: a run resumed
from a checkpoint at step ``k`` draws exactly the batches ``k, k+1, ...`` an uninterrupted
run draws, whatever happened to the DataLoader in between.

Several processes (DDP): every rank draws the same ``batch_size`` windows of step ``s``
and keeps its contiguous slice of ``batch_size / world_size`` rows. The global batch of a
step is therefore the story's batch whatever the hardware, and DDP's averaged gradient is
the one-process gradient up to float summation order.

A seed group (several seeds of one variant trained in one process) draws each member's
windows from its own seed, exactly as its single run would, and stacks them
(:func:`draw_group_windows`).

The token split may live on a GPU: the step's indices are drawn on the CPU (a few hundred
integers, from the same generator wherever the tokens are), and the windows are gathered
where the tokens are, so no batch crosses the bus.

The Winograd task (E16, E17) draws whole sentences the same way: :func:`draw_rows` picks
the items of a step and :class:`StepBatches` streams the steps, whatever the items are.

Nothing here imports Lightning: the evaluate stage draws these windows too (E11's batch).
Lightning's view of them, :class:`~attnlab.training.datamodule.TokenWindows`, lives apart.
"""

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import torch
from torch import Tensor
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

if TYPE_CHECKING:
    import lightning.pytorch as pl


class StepBatch(NamedTuple):
    """One step's batch: the global step it belongs to, inputs and next-token targets."""

    step: int
    x: Tensor  # (B, T) int64 token ids
    y: Tensor  # (B, T) int64: x shifted left by one


def step_generator(seed: int, step: int) -> torch.Generator:
    """A generator seeded from ``(seed, step)``, well mixed by NumPy's SeedSequence.

    A plain ``seed + step`` would make run ``seed=1`` replay run ``seed=0`` one step late.
    """
    state = np.random.SeedSequence([seed, step]).generate_state(1, dtype=np.uint64)[0]
    return torch.Generator().manual_seed(int(state) >> 1)  # 63 bits: a non-negative int64


def draw_rows(
    n_items: int, batch_size: int, seed: int, step: int, rank: int = 0, world_size: int = 1
) -> Tensor:
    """(B_r,) the indices of the items process ``rank`` of ``world_size`` trains on at ``step``.

    Every rank draws the same ``batch_size`` indices of ``range(n_items)``, with
    replacement, from :func:`step_generator` ``(seed, step)``, and keeps its contiguous
    slice of ``batch_size / world_size``.

    Raises:
        ValueError: the batch does not split across the ranks.
    """
    if batch_size % world_size:
        raise ValueError(f"batch_size {batch_size} does not split across {world_size} ranks")
    rows = torch.randint(n_items, (batch_size,), generator=step_generator(seed, step))
    per_rank = batch_size // world_size
    return rows[rank * per_rank : (rank + 1) * per_rank]  # (B_r,)


def draw_windows(
    tokens: Tensor,
    block_size: int,
    batch_size: int,
    seed: int,
    step: int,
    rank: int = 0,
    world_size: int = 1,
) -> StepBatch:
    """The windows of global step ``step`` that process ``rank`` of ``world_size`` trains on.

    Args:
        tokens: The train split, a 1-D integer tensor (uint16 from the Parquet file).
        block_size: The context T; each window holds T + 1 tokens.
        batch_size: The global batch, split evenly across ranks.
        seed: The run's seed.
        step: The global step (0 for the first optimiser step).
        rank: This process's global rank.
        world_size: The number of processes; must divide ``batch_size``.

    Raises:
        ValueError: the split is shorter than one window, or the batch does not split.
    """
    n_starts = len(tokens) - block_size
    if n_starts < 1:
        raise ValueError(f"{len(tokens)} tokens hold no window of {block_size + 1}")
    starts = draw_rows(n_starts, batch_size, seed, step, rank, world_size)  # (B_r,)
    offsets = starts[:, None] + torch.arange(block_size + 1)  # (B_r, T+1)
    windows = tokens[offsets.to(tokens.device, non_blocking=True)].long()  # (B_r, T+1)
    return StepBatch(step, windows[:, :-1], windows[:, 1:])


def draw_group_windows(
    tokens: Tensor,
    block_size: int,
    batch_size: int,
    seeds: Sequence[int],
    step: int,
    rank: int = 0,
    world_size: int = 1,
) -> StepBatch:
    """Step ``step``'s windows of each member of a seed group, stacked: x and y (M, B_r, T).

    Member ``m``'s rows are :func:`draw_windows` with ``seeds[m]``: its single run's batch.
    """
    batches = [
        draw_windows(tokens, block_size, batch_size, seed, step, rank, world_size)
        for seed in seeds
    ]
    return StepBatch(
        step, torch.stack([b.x for b in batches]), torch.stack([b.y for b in batches])
    )


class StepBatches(IterableDataset):
    """The batches of steps ``start, start+1, ..., stop-1`` for one rank, in order.

    ``draw(step, rank, world_size)`` makes a step's batch: :func:`draw_windows` with P0's
    tokens bound, or the Winograd task's ``draw_sentences`` with its sentences (a
    ``functools.partial``, which pickles into DataLoader workers). With workers, worker
    ``w`` of ``n`` yields the steps ``≡ w (mod n)``; the DataLoader takes one batch from
    each worker in turn, which restores the order.
    """

    def __init__(
        self,
        draw: Callable[[int, int, int], StepBatch],
        start: int,
        stop: int,
        rank: int = 0,
        world_size: int = 1,
    ) -> None:
        super().__init__()
        self.draw = draw
        self.start, self.stop = start, stop
        self.rank, self.world_size = rank, world_size

    def __iter__(self) -> Iterator[StepBatch]:
        """Yield one :class:`StepBatch` per step of this worker's share."""
        worker = get_worker_info()
        first, stride = (0, 1) if worker is None else (worker.id, worker.num_workers)
        for step in range(self.start + first, self.stop, stride):
            yield self.draw(step, self.rank, self.world_size)

    @classmethod
    def loader(
        cls,
        draw: Callable[[int, int, int], StepBatch],
        steps: int,
        trainer: "pl.Trainer | None",
        num_workers: int,
        seed: int,
    ) -> DataLoader:
        """A DataLoader over the steps still to train, for this process's rank.

        It starts at ``trainer.global_step``: a DataModule builds it after Lightning has
        restored a checkpoint, so a resumed run continues with the step it stopped at.
        """
        start = trainer.global_step if trainer is not None else 0
        rank = trainer.global_rank if trainer is not None else 0
        world_size = trainer.world_size if trainer is not None else 1
        # batch_size=None: each item already is a batch. A private generator keeps the
        # DataLoader from drawing its base seed from the global RNG, whose state the
        # checkpoint restores and dropout consumes.
        return DataLoader(
            cls(draw, start, steps, rank, world_size),
            batch_size=None,
            num_workers=num_workers,
            generator=torch.Generator().manual_seed(seed),
            persistent_workers=False,
        )
