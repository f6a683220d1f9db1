"""Cutting a token stream into evaluation windows (P0's metric, E09's fixed batch).

P0 scores a split by cutting it into non-overlapping windows of the evaluation length L.
A window of L scored tokens needs L + 1 tokens: L inputs and, shifted by one, L targets.
Consecutive windows share one token (the last target of window i is the first input of
window i + 1), so every token but the stream's first is a target exactly once:

    tokens   t0 t1 ... tL | tL+1 ... t2L | ... | tail
    window 0 in  t0..tL-1,  targets t1..tL
    window 1 in  tL..t2L-1, targets tL+1..t2L
    tail     the N - 1 - W*L targets left over, scored as one shorter window

The first token is never a target: nothing precedes it and the models have no
beginning-of-sequence token. Each window starts with an empty context (the model sees
nothing before its first input), which is what "non-overlapping" means.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from attnlab.errors import ParamsError


@dataclass(frozen=True)
class Windows:
    """A split cut into non-overlapping windows of one length.

    Attributes:
        full: (W, L + 1) int64, every full window, inputs ``[:, :-1]``, targets ``[:, 1:]``.
        tail: (1, r + 1) int64 with 0 < r < L, the leftover targets as one shorter
            window, or None when N - 1 is a multiple of L.
    """

    full: Tensor
    tail: Tensor | None

    @property
    def targets(self) -> int:
        """How many tokens these windows score: N - 1 for a stream of N tokens."""
        tail = 0 if self.tail is None else self.tail.shape[1] - 1
        return self.full.shape[0] * (self.full.shape[1] - 1) + tail

    def batches(self, batch_size: int) -> list[Tensor]:
        """How P0's perplexity scores them: the full windows in batches, then the tail alone."""
        return [*self.full.split(batch_size), *([] if self.tail is None else [self.tail])]


def cut_windows(tokens: Tensor, length: int) -> Windows:
    """Cut a 1-D token stream into non-overlapping windows of ``length`` targets.

    Args:
        tokens: (N,) token ids of any integer dtype (the Parquet splits are uint16).
        length: L, the evaluation length: the number of targets per full window.

    Raises:
        ValueError: ``length`` is not positive, or the stream has fewer than L + 1 tokens
            (not one full window: a perplexity from a fragment would mislead).
    """
    if length <= 0:
        raise ValueError(f"length: must be positive, got {length}")
    n = tokens.shape[0]
    if n < length + 1:
        raise ValueError(f"a stream of {n} tokens holds no window of {length} + 1 tokens")
    stream = tokens.to(torch.long)  # uint16 supports few ops; ids fit in int64 anyway
    full = stream.unfold(0, length + 1, length)  # (W, L+1), a view with stride L
    end = full.shape[0] * length  # index of the last full window's last token
    tail = stream[end:].unsqueeze(0) if end < n - 1 else None  # (1, r+1)
    return Windows(full=full, tail=tail)


def sample_windows(
    tokens: Tensor, length: int, count: int, seed: int, key: str = "count"
) -> Tensor:
    """A fixed, seeded choice of ``count`` full windows of P0's cut, without repeats.

    The windows are a subset of those :func:`cut_windows` scores, so a metric on them is
    an estimate of the full-split metric on the same windows (the validation curve), and
    the same ``seed`` always picks the same batch (E09's fixed batch).

    Returns:
        (count, length + 1) int64 windows, in the random order drawn.

    Args:
        tokens: (N,) the split's token ids.
        length: L, the targets per window.
        count: how many windows to choose.
        seed: what chooses them.
        key: the params key ``count`` comes from, for the message.

    Raises:
        ParamsError: the split holds fewer than ``count`` full windows (naming ``key``).
    """
    full = cut_windows(tokens, length).full
    if not 0 < count <= full.shape[0]:
        raise ParamsError(
            f"{key}: {count} windows asked for, but the split holds only {full.shape[0]} "
            f"windows of {length} + 1 tokens"
        )
    generator = torch.Generator().manual_seed(seed)
    chosen = torch.randperm(full.shape[0], generator=generator)[:count]
    return full[chosen]  # (count, L+1)
