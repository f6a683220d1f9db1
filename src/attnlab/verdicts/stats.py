"""The statistics every verdict of docs/catalogue.md rests on: seeds, intervals, a binomial test.

A trained measurement is a set of per-seed values. :func:`summarise` gives its mean,
standard deviation, n and 95 % t-interval of the mean; :func:`paired` keeps the seeds two
measurements share (the same seed means the same initialisation and data order, so a
comparison is made seed by seed), and :func:`paired_ratio` summarises their per-seed
ratios; :func:`binomial_cdf` is the exact binomial tail for an accuracy against chance. No
statistics library is a dependency: the t quantile inverts the closed-form Student t
distribution for an integer number of degrees of freedom (Abramowitz and Stegun 26.7.3 and
26.7.4) by bisection, and the binomial sum is exact.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

Seed = int | None  # None: a file recorded once, without a seed (a probe, the corpus)
LEVEL = 0.95  # every interval of the report is a 95 % interval
MAX_SEEDS = 100  # beyond this many seeds an estimate of the seeds needed is not worth giving


def t_central(t: float, df: int) -> float:
    """P(|T| < t) for Student's t with ``df`` degrees of freedom (``df`` >= 1, ``t`` >= 0)."""
    theta = math.atan(t / math.sqrt(df))
    cos2, term, total = math.cos(theta) ** 2, 1.0, 0.0
    if df % 2 == 1:  # theta + sin cos (1 + 2/3 cos^2 + (2*4)/(3*5) cos^4 + ...), times 2/pi
        for k in range(1, (df - 1) // 2 + 1):
            total += term
            term *= cos2 * (2 * k) / (2 * k + 1)
        series = math.sin(theta) * math.cos(theta) * total if df > 1 else 0.0
        return 2 / math.pi * (theta + series)
    for k in range(1, df // 2 + 1):  # sin (1 + 1/2 cos^2 + (1*3)/(2*4) cos^4 + ...)
        total += term
        term *= cos2 * (2 * k - 1) / (2 * k)
    return math.sin(theta) * total


def t_quantile(level: float, df: int) -> float:
    """The ``t`` with P(|T| < t) = ``level``: the half-width factor of a t-interval.

    Raises:
        ValueError: ``df`` below 1 or ``level`` outside (0, 1).
    """
    if df < 1 or not 0 < level < 1:
        raise ValueError(f"t quantile needs df >= 1 and 0 < level < 1, got {df}, {level}")
    lo, hi = 0.0, 1.0
    while t_central(hi, df) < level:
        lo, hi = hi, 2 * hi
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_central(mid, df) < level else (lo, mid)
        if hi - lo < 1e-12 * hi:
            break
    return (lo + hi) / 2


@dataclass(frozen=True)
class Summary:
    """One measurement over seeds: the per-seed values and what they say together."""

    values: Mapping[Seed, float]

    @property
    def n(self) -> int:
        """How many seeds."""
        return len(self.values)

    @property
    def mean(self) -> float:
        """The mean over seeds."""
        return math.fsum(self.values.values()) / self.n

    @property
    def std(self) -> float | None:
        """The sample standard deviation (n - 1 in the denominator); ``None`` at n = 1."""
        if self.n < 2:
            return None
        mean = self.mean
        return math.sqrt(math.fsum((v - mean) ** 2 for v in self.values.values()) / (self.n - 1))

    @property
    def half_width(self) -> float | None:
        """Half the width of the 95 % t-interval of the mean; ``None`` at n = 1."""
        std = self.std
        return None if std is None else t_quantile(LEVEL, self.n - 1) * std / math.sqrt(self.n)

    @property
    def interval(self) -> tuple[float, float] | None:
        """The 95 % t-interval of the mean, or ``None`` at n = 1 (no spread to estimate)."""
        half = self.half_width
        return None if half is None else (self.mean - half, self.mean + half)

    def seeds_needed(self, threshold: float) -> int | None:
        """About how many seeds would make the interval clear ``threshold`` at this spread.

        The n at which the half-width, at the same mean and standard deviation, equals the
        mean's distance from the threshold; ``None`` when that cannot be estimated or
        would take more than :data:`MAX_SEEDS`.
        """
        std, gap = self.std, abs(self.mean - threshold)
        if not std or gap == 0:
            return None
        n = max(self.n, 2)
        while n <= MAX_SEEDS and t_quantile(LEVEL, n - 1) * std / math.sqrt(n) >= gap:
            n += 1
        return n if n <= MAX_SEEDS else None


def summarise(values: Mapping[Seed, float]) -> Summary:
    """The summary of per-seed ``values`` (in seed order; an unseeded value sorts first).

    Raises:
        ValueError: no values.
    """
    if not values:
        raise ValueError("no values to summarise")
    return Summary(dict(sorted(values.items(), key=lambda item: (item[0] is not None, item[0]))))


def paired(a: Mapping[Seed, float], b: Mapping[Seed, float]) -> dict[Seed, tuple[float, float]]:
    """The seeds both ``a`` and ``b`` have, each with its two values, in seed order.

    A side recorded once without a seed (an exact computation) pairs with every seed of
    the other side.
    """
    if set(a) == {None}:
        a = dict.fromkeys(b, a[None])
    elif set(b) == {None}:
        b = dict.fromkeys(a, b[None])
    shared = sorted(set(a) & set(b), key=lambda s: (s is not None, s))
    return {seed: (a[seed], b[seed]) for seed in shared}


@dataclass(frozen=True)
class Ratio:
    """``a / b`` paired by seed: the per-seed ratios and the summary of their logarithms."""

    ratios: Mapping[Seed, float]
    logs: Summary

    @property
    def centre(self) -> float:
        """The geometric mean of the ratios."""
        return math.exp(self.logs.mean)

    @property
    def interval(self) -> tuple[float, float] | None:
        """The 95 % interval of the geometric mean; ``None`` at n = 1."""
        found = self.logs.interval
        return None if found is None else (math.exp(found[0]), math.exp(found[1]))


def paired_ratio(a: Mapping[Seed, float], b: Mapping[Seed, float]) -> Ratio | None:
    """``a / b`` for each seed both have (both values positive); ``None`` when none is left."""
    ratios = {s: x / y for s, (x, y) in paired(a, b).items() if x > 0 and y > 0}
    if not ratios:
        return None
    return Ratio(ratios, summarise({s: math.log(r) for s, r in ratios.items()}))


def binomial_cdf(k: int, n: int, p: float = 0.5) -> float:
    """P(X <= k) for X ~ Binomial(n, p), summed exactly (fractions), then rounded to float."""
    if not 0 <= p <= 1 or n < 0:
        raise ValueError(f"binomial needs n >= 0 and 0 <= p <= 1, got n={n}, p={p}")
    q = Fraction(str(p))
    total = sum(math.comb(n, i) * q**i * (1 - q) ** (n - i) for i in range(max(-1, min(k, n)) + 1))
    return float(total)
