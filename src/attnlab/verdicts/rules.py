"""Predicates with their tests and thresholds stated: how a claim of docs/catalogue.md is decided.

A :class:`Rule` names the measurements it needs (:class:`Ref`), says its test in words
(the statistical test and the threshold, shown beside every verdict) and decides from the
numbers alone, in three states (docs/catalogue.md, How a claim is decided):

- a trained measurement is a set of per-seed values. A comparison of two variants is made
  seed by seed (only the seeds both have) on the 95 % t-interval of the mean log-ratio
  (:func:`ratio_in`, :func:`greater`, :func:`lowest`) or of the mean difference (a
  share or an accuracy, ``greater(..., on="difference")``); one measurement's range on
  the t-interval of its mean (:func:`in_range`). The claim *holds* when the whole
  interval is on the claim's side of the threshold, *does not hold* when it is wholly on
  the other side, and is *inconclusive* otherwise, or at n = 1, where no interval exists;
- an accuracy against chance is an exact one-sided binomial test of the held-out answers,
  pooled over seeds (:func:`below_chance`);
- an exact computation (a :class:`Ref` with ``exact``: a probe, a parameter count) is one
  value, decided as a point: it holds or does not;
- :func:`all_of` holds when every part holds, does not hold when any part does not, and is
  inconclusive otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from attnlab.verdicts.decisions import FAILS, HOLDS, INCONCLUSIVE, Awaited
from attnlab.verdicts.number_format import fmt
from attnlab.verdicts.stats import Seed, binomial_cdf, paired, summarise

# The rule's definition: a one-sided binomial p below this is "significantly" below chance.
CHANCE_ALPHA = 0.05
PerSeed = Mapping[Seed, float]


class Measurements(Protocol):
    """What the pipeline measured, as a rule reads it: every lookup answers per seed.

    A source that was not measured answers empty. An alias row's source reads its
    variant's runs.
    """

    def per_seed(self, source: str, key: str) -> Mapping[Seed, float]:
        """The finite number at ``key`` of each seed of ``source`` (``*``: a prefix's mean)."""

    def record(self, source: str) -> Mapping[str, Any]:
        """Every key of ``source`` with its first seed's value."""

    def records(self) -> Iterable[Mapping[str, Any]]:
        """Every record read: each metrics file of every seed, then every other JSON record."""

    def resolve(self, source: str) -> str:
        """The source whose files ``source`` reads (an alias row's: its variant's)."""

    def awaiting(self, sources: Iterable[tuple[str, bool]]) -> Awaited:
        """Which runs of ``sources`` (each: source, exact) are not current."""


@dataclass(frozen=True)
class Ref:
    """One measurement: ``key`` in metrics file ``source``, shown as ``label``.

    A key ending in ``*`` is the mean over every key with that prefix (heads, blocks).
    ``exact`` marks a computation with no seed to vary (a probe, a formula): one value,
    decided as a point.
    """

    source: str
    key: str
    label: str
    exact: bool = False

    def get(self, results: Measurements) -> Any:
        """The measured values by seed, or ``None`` when it was not measured."""
        return results.per_seed(self.source, self.key) or None

    def where(self, results: Measurements) -> str:
        """Where the value is read from, for a "not run" line (an alias row's: its variant's)."""
        return f"{results.resolve(self.source)}.json: {self.key}"


@dataclass(frozen=True)
class Outcome:
    """A claim's state and the numbers that decided it.

    Attributes:
        status: ``HOLDS``, ``FAILS`` or ``INCONCLUSIVE``.
        numbers: the deciding numbers in words.
        n: the seeds the decision rests on; ``None`` for an exact computation.
        interval: the deciding interval (or p-value) as printed; empty when exact.
        seeds_needed: for an inconclusive interval, about how many seeds at this spread
            would decide it (``None`` when not estimable).
    """

    status: str
    numbers: str
    n: int | None = None
    interval: str = ""
    seeds_needed: int | None = None


Values = Mapping[Ref, Any]


@dataclass(frozen=True)
class Rule:
    """A predicate over measurements: what it needs, its test in words, and the decision."""

    needs: tuple[Ref, ...]
    test: str
    decide: Callable[[Values], Outcome]


def _bounds(lo: float | None, hi: float | None, strict: bool = False) -> str:
    """The range in words: "at least 2", "below 1", "between 0.9 and 1.01"."""
    if lo is not None and lo == hi:
        return f"equal to {fmt(lo)}"
    if lo is not None and hi is not None:
        return f"between {fmt(lo)} and {fmt(hi)}" + (" (both excluded)" if strict else "")
    if lo is not None:
        return f"{'above' if strict else 'at least'} {fmt(lo)}"
    if hi is not None:
        return f"{'below' if strict else 'at most'} {fmt(hi)}"
    raise ValueError("a range needs a lower or an upper bound")


def _inside(value: float, lo: float | None, hi: float | None, strict: bool) -> bool:
    if strict:
        return (lo is None or value > lo) and (hi is None or value < hi)
    return (lo is None or value >= lo) and (hi is None or value <= hi)


def _outside(low: float, high: float, lo: float | None, hi: float | None, strict: bool) -> bool:
    """Whether the whole of [low, high] misses the range (so no point of it satisfies it)."""
    if strict:
        return (lo is not None and high <= lo) or (hi is not None and low >= hi)
    return (lo is not None and high < lo) or (hi is not None and low > hi)


@dataclass(frozen=True)
class Bounds:
    """A claim's range on one quantity: [lo, hi], an open side when None."""

    lo: float | None = None
    hi: float | None = None
    strict: bool = False

    def words(self) -> str:
        """The range in words."""
        return _bounds(self.lo, self.hi, self.strict)


def decide_values(values: PerSeed, bounds: Bounds, exact: bool, log: bool = False) -> Outcome:
    """Decide one quantity given per seed against ``bounds`` (the core of every rule).

    ``exact``: one value, a point decision. Otherwise the 95 % t-interval of the mean
    over seeds, of the values' logarithm when ``log`` (a ratio: the interval of the mean
    log-ratio, shown back as ratios). ``numbers`` holds the interval, n and the per-seed
    values (empty when exact); the caller prints the central value before it.

    Raises:
        ValueError: a ratio that is not positive (no logarithm).
    """
    if log and any(v <= 0 for v in values.values()):
        raise ValueError("a ratio that is not positive")
    shown = ", ".join(f"{_seed(s)}{fmt(v)}" for s, v in values.items())
    if exact:
        value = next(iter(values.values()))
        return Outcome(HOLDS if _inside(value, bounds.lo, bounds.hi, bounds.strict) else FAILS, "")
    summary = summarise({s: math.log(v) if log else v for s, v in values.items()})
    back = math.exp if log else float
    interval = summary.interval
    if interval is None:
        return Outcome(INCONCLUSIVE, "n = 1: one seed, no interval", 1, "n = 1")
    low, high = back(interval[0]), back(interval[1])
    text = f"[{fmt(low)}, {fmt(high)}]"
    numbers = f"95 % CI {text}, n = {summary.n} (per seed {shown})"
    if _inside(low, bounds.lo, bounds.hi, bounds.strict) and _inside(
        high, bounds.lo, bounds.hi, bounds.strict
    ):
        return Outcome(HOLDS, numbers, summary.n, text)
    if _outside(low, high, bounds.lo, bounds.hi, bounds.strict):
        return Outcome(FAILS, numbers, summary.n, text)
    straddled = [b for b in (bounds.lo, bounds.hi) if b is not None and low <= b <= high]
    needs = [summary.seeds_needed(math.log(b) if log else b) for b in straddled]
    needed = max(needs) if needs and None not in needs else None
    return Outcome(INCONCLUSIVE, numbers, summary.n, text, needed)


def _seed(seed: Seed) -> str:
    return "" if seed is None else f"{seed}: "


def _exact(*refs: Ref) -> bool:
    return all(ref.exact for ref in refs)


def _kind(exact: bool, sampled: str) -> str:
    return "exact" if exact else sampled


def _paired_rule(a: Ref, b: Ref, bounds: Bounds, log: bool, test: str, what: str) -> Rule:
    """A rule on ``a / b`` (``log``) or ``a - b`` per shared seed, decided on its interval."""
    exact = _exact(a, b)
    kind = _kind(exact, f"paired by seed, 95 % t-interval of the mean {what}")

    def decide(values: Values) -> Outcome:
        pairs = paired(values[a], values[b])
        if not pairs:
            raise ValueError(f"{a.label} and {b.label} share no seed")
        if log and any(y == 0 for _, y in pairs.values()):
            raise ZeroDivisionError(f"{b.label} is 0")
        per_seed = {s: x / y if log else x - y for s, (x, y) in pairs.items()}
        # The means shown are over the paired seeds only: a side with extra seeds (one
        # variant shared by two claims) must not show a mean the ratio never read.
        mean_a = _mean({s: x for s, (x, _) in pairs.items()})
        mean_b = _mean({s: y for s, (_, y) in pairs.items()})
        means = f"{a.label} = {fmt(mean_a)}, {b.label} = {fmt(mean_b)}"
        outcome = decide_values(per_seed, bounds, exact, log)
        name = "ratio" if log else "difference"
        digits = f"{math.exp(_mean_log(per_seed)):.3f}" if log else fmt(_mean(per_seed))
        return _reworded(outcome, _joined(f"{means}: {name} {digits}", outcome.numbers))

    return Rule((a, b), f"{test} ({kind})", decide)


def _joined(centre: str, detail: str) -> str:
    return f"{centre}, {detail}" if detail else centre


def _mean(values: PerSeed) -> float:
    return math.fsum(values.values()) / len(values)


def _mean_log(values: PerSeed) -> float:
    return math.fsum(math.log(v) for v in values.values()) / len(values)


def _reworded(outcome: Outcome, numbers: str) -> Outcome:
    return Outcome(outcome.status, numbers, outcome.n, outcome.interval, outcome.seeds_needed)


def ratio_in(
    num: Ref, den: Ref, lo: float | None = None, hi: float | None = None, strict: bool = False
) -> Rule:
    """``num / den`` within [lo, hi] (an open side when None; exclusive when ``strict``)."""
    bounds = Bounds(lo, hi, strict)
    return _paired_rule(
        num, den, bounds, True, f"{num.label} / {den.label} {bounds.words()}", "log-ratio"
    )


def greater(a: Ref, b: Ref, or_equal: bool = False, on: str = "ratio") -> Rule:
    """``a`` above ``b`` (at least ``b`` when ``or_equal``), on the paired ratio or difference.

    ``on="ratio"`` for positive quantities (perplexities, gradient norms), ``"difference"``
    for shares and accuracies.
    """
    log = on == "ratio"
    bounds = Bounds(1.0 if log else 0.0, None, strict=not or_equal)
    test = f"{a.label} {'at least' if or_equal else 'above'} {b.label}"
    return _paired_rule(a, b, bounds, log, test, "log-ratio" if log else "difference")


def in_range(
    ref: Ref, lo: float | None = None, hi: float | None = None, strict: bool = False
) -> Rule:
    """A single measurement within [lo, hi] (exclusive when ``strict``), on its mean's interval."""
    bounds = Bounds(lo, hi, strict)
    kind = _kind(ref.exact, "95 % t-interval of the mean over seeds")

    def decide(values: Values) -> Outcome:
        outcome = decide_values(values[ref], bounds, ref.exact)
        centre = f"{ref.label} = {fmt(_mean(values[ref]))}"
        return _reworded(outcome, _joined(centre, outcome.numbers))

    return Rule((ref,), f"{ref.label} {bounds.words()} ({kind})", decide)


def combine(outcomes: list[Outcome], joiner: str = "; ") -> Outcome:
    """All of ``outcomes``: holds if all hold, does not hold if any does not, else inconclusive."""
    statuses = {o.status for o in outcomes}
    status = FAILS if FAILS in statuses else HOLDS if statuses == {HOLDS} else INCONCLUSIVE
    sizes = [o.n for o in outcomes if o.n is not None]
    pending = [o for o in outcomes if o.status == INCONCLUSIVE]
    needs = [o.seeds_needed for o in pending]
    return Outcome(
        status,
        joiner.join(o.numbers for o in outcomes),
        min(sizes) if sizes else None,
        "; ".join(o.interval for o in outcomes if o.interval),
        max(needs) if needs and None not in needs else None,
    )


def all_of(*rules: Rule, test: str | None = None) -> Rule:
    """Every one of ``rules`` holds (their needs and tests joined, unless ``test`` says)."""
    needs = tuple(dict.fromkeys(ref for rule in rules for ref in rule.needs))

    def decide(values: Values) -> Outcome:
        return combine([rule.decide(values) for rule in rules])

    return Rule(needs, test or "; and ".join(rule.test for rule in rules), decide)


def lowest(target: Ref, others: tuple[Ref, ...]) -> Rule:
    """``target`` strictly below every one of ``others``: each paired ratio below 1."""
    test = (
        f"{target.label} below each of "
        + ", ".join(o.label for o in others)
        + " (each paired by seed, 95 % t-interval of the mean log-ratio)"
    )
    return all_of(*(ratio_in(target, other, hi=1.0, strict=True) for other in others), test=test)


def below_chance(acc: Ref, sentences: Ref, chance: float = 0.5) -> Rule:
    """An accuracy below ``chance``: exact one-sided binomial test of the pooled answers.

    Each seed's right answers are ``round(acc * sentences)`` (the score file records the
    share to 4 places and the count of sentences, exact below 5,000 sentences). Holds
    when P(X <= right | chance) < 0.05, does not hold when P(X >= right | chance) < 0.05
    (significantly above chance), inconclusive otherwise.
    """
    test = (
        f"{acc.label} below {fmt(chance)} (exact one-sided binomial test of the held-out "
        f"answers pooled over seeds, p below {CHANCE_ALPHA:g})"
    )

    def decide(values: Values) -> Outcome:
        pairs = paired(values[acc], values[sentences])
        right = sum(round(share * count) for share, count in pairs.values())
        total = sum(round(count) for _, count in pairs.values())
        if total == 0:
            raise ValueError("no held-out sentences")
        below = binomial_cdf(right, total, chance)
        above = 1 - binomial_cdf(right - 1, total, chance)
        status = HOLDS if below < CHANCE_ALPHA else FAILS if above < CHANCE_ALPHA else INCONCLUSIVE
        numbers = (
            f"{right} of {total} held-out answers right ({fmt(right / total)}) over "
            f"n = {len(pairs)} seeds; P(at most {right} | chance) = {below:.3g}, "
            f"P(at least {right} | chance) = {above:.3g}"
        )
        return Outcome(status, numbers, len(pairs), f"p = {below:.3g}")

    return Rule((acc, sentences), test, decide)


@dataclass(frozen=True)
class EachRef(Ref):
    """Every key of ``source`` that starts with ``key`` (``e05/var_over_d@``), by key."""

    def get(self, results: Measurements) -> dict[str, dict[Seed, float]] | None:
        """The matching values by key and seed, or ``None`` when there is none."""
        found = {
            k: results.per_seed(self.source, k)
            for k in results.record(self.source)
            if k.startswith(self.key)
        }
        numbers = {k: v for k, v in found.items() if v}
        return numbers or None

    def where(self, results: Measurements) -> str:
        """Where the values are read from."""
        return f"{results.resolve(self.source)}.json: {self.key}*"


def each_in_range(ref: EachRef, lo: float, hi: float) -> Rule:
    """Every value matched by ``ref`` within [lo, hi]."""
    bounds = Bounds(lo, hi)
    kind = _kind(ref.exact, "95 % t-interval of the mean over seeds")

    def decide(values: Values) -> Outcome:
        found = values[ref]
        parts = []
        for key, per_seed in found.items():
            outcome = decide_values(per_seed, bounds, ref.exact)
            centre = f"{key.removeprefix(ref.key)}: {fmt(_mean(per_seed))}"
            parts.append(_reworded(outcome, _joined(centre, outcome.numbers)))
        joined = combine(parts, ", ")
        return _reworded(joined, f"{ref.label} by {joined.numbers}")

    return Rule((ref,), f"{ref.label} {bounds.words()} at every point ({kind})", decide)
