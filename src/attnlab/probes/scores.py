"""Why scores are divided by sqrt(d_k): E05 (Var q.k = d), E06 (effective tokens), E07 (frozen).

E05: for q, k ~ N(0, 1)^d, q.k is a sum of d independent unit-variance products, so its
variance is d and its std sqrt(d). E06 and E07 look at one query against a row of keys:
undivided, the row's scores have std sqrt(d), so the softmax sharpens with d until one
key takes all the weight (exp(entropy) -> 1, max weight > 0.99) and the softmax Jacobian,
whose trace is sum w(1 - w), vanishes: a frozen row passes no gradient. Divided, the scores
are ~N(0, 1) at every d and the row stays a soft mixture.
"""

from dataclasses import dataclass
from typing import ClassVar

import torch
from torch import Tensor

from attnlab.probes.records import Value
from attnlab.probes.seeding import generator


@dataclass(frozen=True)
class DotProductStats:
    """E05 at one d: the sample statistics of q.k over the pairs."""

    d: int
    pairs: int
    mean: float
    var: float
    std: float

    @property
    def sqrt_d(self) -> float:
        """The predicted std."""
        return self.d**0.5


@dataclass(frozen=True)
class DotProductResult:
    """E05 over every d."""

    stats: list[DotProductStats]

    def metrics(self) -> dict[str, Value]:
        """Variance, std, sqrt(d) and Var/d (the claim: 1) at each d."""
        out: dict[str, Value] = {}
        for s in self.stats:
            out |= {
                f"e05/var@{s.d}": s.var,
                f"e05/std@{s.d}": s.std,
                f"e05/sqrt_d@{s.d}": s.sqrt_d,
                f"e05/var_over_d@{s.d}": s.var / s.d,
            }
        return out

    def table(self) -> list[dict[str, Value]]:
        """One row per d."""
        return [
            {
                "d": s.d,
                "pairs": s.pairs,
                "mean": s.mean,
                "var": s.var,
                "std": s.std,
                "sqrt_d": s.sqrt_d,
                "var_over_d": s.var / s.d,
            }
            for s in self.stats
        ]


def dot_product_probe(dims: list[int], pairs: int, seed: int) -> DotProductResult:
    """Run E05: draw ``pairs`` independent q, k ~ N(0, 1)^d for each d in ``dims``."""
    stats = []
    for d in dims:
        qk = torch.randn(2, pairs, d, generator=generator(seed, "e05", d))  # (2, N, d)
        dots = (qk[0] * qk[1]).sum(dim=-1).double()  # (N,)
        var = dots.var().item()  # unbiased
        stats.append(DotProductStats(d, pairs, dots.mean().item(), var, var**0.5))
    return DotProductResult(stats)


def score_rows(rows: int, row_length: int, d: int, g: torch.Generator) -> Tensor:
    """Undivided scores of ``rows`` queries, each against its own ``row_length`` keys.

    Each row draws its query and keys, N(0, 1)^d, in one call, so row r is the same
    whatever ``rows`` is.

    Returns:
        (rows, row_length) float32 scores q.k_j.
    """
    out = torch.empty(rows, row_length)
    for r in range(rows):
        qk = torch.randn(row_length + 1, d, generator=g)  # (1 + L, d): the query, then keys
        out[r] = qk[1:] @ qk[0]  # (L,)
    return out


@dataclass(frozen=True)
class RowStats:
    """E06 and E07 at one d, with or without the division by sqrt(d)."""

    d: int
    divided: bool
    mean_effective_tokens: float
    median_effective_tokens: float
    mean_jacobian_trace: float  # sum_j w_j (1 - w_j), averaged over rows
    frozen_fraction: float  # rows whose largest weight exceeds the threshold


def row_stats(scores: Tensor, d: int, divided: bool, frozen_above: float) -> RowStats:
    """Softmax each row of ``scores`` (rows, L) and summarise it (in float64)."""
    s = scores.double() / (d**0.5 if divided else 1.0)  # (rows, L)
    w = s.softmax(dim=-1)  # (rows, L)
    # entr(w) = -w log w with entr(0) = 0: undivided rows underflow to exact zeros.
    effective = torch.special.entr(w).sum(dim=-1).exp()  # (rows,)
    return RowStats(
        d=d,
        divided=divided,
        mean_effective_tokens=effective.mean().item(),
        median_effective_tokens=effective.median().item(),
        mean_jacobian_trace=(w * (1 - w)).sum(dim=-1).mean().item(),
        frozen_fraction=(w.amax(dim=-1) > frozen_above).double().mean().item(),
    )


@dataclass(frozen=True)
class SoftmaxRows:
    """The shared draw of E06 and E07: per-d statistics and one example row."""

    rows: int
    row_length: int
    frozen_above: float
    stats: list[RowStats]
    example_d: int
    example_scores: list[float]  # undivided, at example_d


def softmax_rows_probe(
    dims: list[int], rows: int, row_length: int, frozen_above: float, example_d: int, seed: int
) -> SoftmaxRows:
    """Draw ``rows`` rows of ``row_length`` scores per d; summarise them divided and not.

    Args:
        dims: The head widths d.
        rows: Rows (queries) per d.
        row_length: Keys per row (64 in the story).
        frozen_above: A row is frozen when its largest weight exceeds this (0.99).
        example_d: The d whose first row is kept as the printed example.
        seed: The params seed.
    """
    stats, example = [], []
    for d in dims:
        scores = score_rows(rows, row_length, d, generator(seed, "e06-e07", d))  # (rows, L)
        stats += [row_stats(scores, d, divided, frozen_above) for divided in (True, False)]
        if d == example_d:
            example = scores[0].tolist()
    return SoftmaxRows(rows, row_length, frozen_above, stats, example_d, example)


def _tag(divided: bool) -> str:
    return "divided" if divided else "undivided"


@dataclass(frozen=True)
class _RowStatsView:
    """One experiment's columns of :class:`SoftmaxRows`, as metrics and as a table.

    Subclasses name the experiment and the :class:`RowStats` fields it reports.
    """

    draw: SoftmaxRows
    experiment: ClassVar[str]
    fields: ClassVar[tuple[str, ...]]

    def metrics(self) -> dict[str, Value]:
        """Each field per d, divided and undivided."""
        return {
            f"{self.experiment}/{_tag(s.divided)}/{field}@{s.d}": getattr(s, field)
            for s in self.draw.stats
            for field in self.fields
        }

    def table(self) -> list[dict[str, Value]]:
        """One row per (d, division)."""
        return [
            {
                "d": s.d,
                "divided": s.divided,
                "rows": self.draw.rows,
                "row_length": self.draw.row_length,
                **self._settings(),
                **{field: getattr(s, field) for field in self.fields},
            }
            for s in self.draw.stats
        ]

    def _settings(self) -> dict[str, Value]:
        """Protocol columns this experiment's table adds to every row."""
        return {}


class EffectiveTokens(_RowStatsView):
    """E06's view: mean and median exp(entropy) per d."""

    experiment = "e06"
    fields = ("mean_effective_tokens", "median_effective_tokens")

    def example_table(self) -> list[dict[str, Value]]:
        """The printed example: one row of scores at example_d and its two softmaxes."""
        d = self.draw.example_d
        scores = torch.tensor(self.draw.example_scores, dtype=torch.float64)  # (L,)
        divided = (scores / d**0.5).softmax(dim=-1).tolist()
        undivided = scores.softmax(dim=-1).tolist()
        return [
            {"d": d, "key": j, "score": s, "weight_divided": a, "weight_undivided": b}
            for j, (s, a, b) in enumerate(zip(scores.tolist(), divided, undivided, strict=True))
        ]


class FrozenRows(_RowStatsView):
    """E07's view: mean softmax-Jacobian trace and the frozen fraction per d."""

    experiment = "e07"
    fields = ("mean_jacobian_trace", "frozen_fraction")

    def _settings(self) -> dict[str, Value]:
        return {"frozen_above": self.draw.frozen_above}
