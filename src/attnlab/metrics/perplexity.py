"""Perplexity as P0 defines it, at one length or a list of them (E02-E18, E13).

P0: perplexity = exp(mean next-token NLL) over the whole split, cut into non-overlapping
windows of the evaluation length, every token scored exactly once (see
:mod:`attnlab.metrics.windows` for the cut, the first token and the tail). E13 runs the
same protocol at several lengths on one model (:func:`perplexity_by_length`).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attnlab.metrics.windows import cut_windows

_MAX_EXP = math.log(sys.float_info.max)  # 709.78: the largest x whose exp is a float

PERPLEXITY_PROTOCOL = (
    "exp(mean next-token NLL, nats) over the whole split, cut into non-overlapping windows of "
    "the evaluation length L: window i reads tokens [iL, iL+L) and predicts [iL+1, iL+L], "
    "each window starting from an empty context. Every token but the split's first (which "
    "has nothing before it and is never a target) is scored exactly once; the targets left "
    "over after the last full window are scored as one shorter window."
)
EXTRAPOLATION_PROTOCOL = (
    "the same protocol at each length L on one trained model: windows of L tokens, whatever "
    "the training length. Positions never seen in training use what the method gives them: "
    "learned rows past the training length keep their random init, sinusoidal, RoPE and "
    "ALiBi are computed for any length, no positions is length-agnostic."
)


@dataclass(frozen=True)
class Perplexity:
    """The result of scoring a split.

    Attributes:
        ppl: exp(nll).
        nll: mean next-token negative log-likelihood, nats per token.
        tokens: how many tokens were scored (N - 1 for a whole split of N tokens).
    """

    ppl: float
    nll: float
    tokens: int

    @classmethod
    def of_sum(cls, total: float, tokens: int) -> Perplexity:
        """The perplexity of ``tokens`` targets whose NLL sums to ``total`` nats."""
        return cls(ppl=_exp(total / tokens), nll=total / tokens, tokens=tokens)


@contextmanager
def evaluating(model: nn.Module) -> Iterator[nn.Module]:
    """Put ``model`` in eval mode without gradients, and restore its mode afterwards.

    Restoring matters for a score taken inside a fit (the whole-split score at its end).
    """
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            yield model
    finally:
        model.train(was_training)


def _device(model: nn.Module) -> torch.device:
    parameter = next(model.parameters(), None)
    return parameter.device if parameter is not None else torch.device("cpu")


def batch_nll(model: nn.Module, batch: Tensor) -> float:
    """Sum of the NLL of every target of ``batch`` (B, L+1), on the model's device, in nats.

    The batch's sum is a float64 Python float, so sums over batches accumulate in float64
    (the validation curve adds its batches with this too).
    """
    logits = model(batch[:, :-1])  # (B, L, V)
    nll = F.cross_entropy(logits.flatten(0, 1).float(), batch[:, 1:].flatten(), reduction="sum")
    return float(nll.double())


def _summed_nll(model: nn.Module, batches: Sequence[Tensor]) -> float:
    """Sum of the NLL of every target of ``batches``, each (B, L+1)."""
    device, total = _device(model), 0.0
    for batch in batches:
        total += batch_nll(model, batch.to(device))  # a plain loop: sum() compensates (3.12+)
    return total


def score_windows(model: nn.Module, windows: Tensor, batch_size: int) -> Perplexity:
    """Perplexity of ``model`` over the given windows, (W, L + 1) int64, each scored whole.

    Runs in eval mode under ``torch.inference_mode`` and restores the model's mode.
    """
    with evaluating(model):
        total = _summed_nll(model, windows.split(batch_size))
    return Perplexity.of_sum(total, windows.shape[0] * (windows.shape[1] - 1))


def _exp(nll: float) -> float:
    # A diverged model's NLL can pass 709.78, where math.exp raises OverflowError: its
    # perplexity is then infinite, which callers refuse with a message of their own.
    return math.exp(nll) if nll < _MAX_EXP else math.inf


def perplexity(model: nn.Module, tokens: Tensor, length: int, batch_size: int) -> Perplexity:
    """P0's perplexity of ``model`` on a whole split (the protocol: ``PERPLEXITY_PROTOCOL``).

    Args:
        model: maps token ids (B, T) to next-token logits (B, T, V) for T up to ``length``.
        tokens: (N,) the split, any integer dtype.
        length: the evaluation length L (the training context for ``val/ppl``).
        batch_size: windows per forward pass; changes speed and memory, not the result
            beyond float rounding.

    Returns:
        The perplexity, the mean NLL and the number of tokens scored, N - 1.
    """
    cut = cut_windows(tokens, length)
    with evaluating(model):
        total = _summed_nll(model, cut.batches(batch_size))
    return Perplexity.of_sum(total, cut.targets)


def perplexity_by_length(
    model: nn.Module, tokens: Tensor, lengths: Sequence[int], batch_size: int
) -> dict[int, Perplexity]:
    """P0's perplexity at each evaluation length on one model (E13's extrapolation).

    The protocol is ``EXTRAPOLATION_PROTOCOL``. A learned position table must hold the
    longest length (``ModelConfig.max_positions``), or the model raises.

    Returns:
        The perplexity at each length, keyed by length, in the order given.
    """
    return {length: perplexity(model, tokens, length, batch_size) for length in lengths}
