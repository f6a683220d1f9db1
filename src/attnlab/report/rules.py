"""Predicates with their thresholds stated: how a claim of docs/catalogue.md is decided.

A :class:`Rule` names the measurements it needs (:class:`Ref`), says its test in words
(the threshold included, shown beside every verdict) and decides from the numbers alone.
The constructors here (:func:`ratio_in`, :func:`in_range`, :func:`lowest`, :func:`all_of`)
cover every claim of the catalogue; :mod:`attnlab.report.claims` lists the claims.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from attnlab.report.results import Results


@dataclass(frozen=True)
class Ref:
    """One measurement: ``key`` in metrics file ``source``, shown as ``label``.

    A key ending in ``*`` is the mean over every key with that prefix (heads, blocks).
    """

    source: str
    key: str
    label: str

    def get(self, results: Results) -> Any:
        """The measured value, or ``None`` when it was not measured."""
        return results.value(self.source, self.key)

    def where(self) -> str:
        """Where the value is read from, for a "not run" line."""
        return f"{self.source}.json: {self.key}"


@dataclass(frozen=True)
class Outcome:
    """Whether a claim holds, and the numbers that decided it."""

    holds: bool
    numbers: str


Values = Mapping[Ref, Any]


@dataclass(frozen=True)
class Rule:
    """A predicate over measurements: what it needs, its test in words, and the decision."""

    needs: tuple[Ref, ...]
    test: str
    decide: Callable[[Values], Outcome]


def fmt(value: float) -> str:
    """A number as the report prints it: four significant digits, no exponent when sane."""
    if float(value).is_integer() and abs(value) >= 1e4:
        return f"{int(value):,}"
    if value == 0 or 1e-3 <= abs(value) < 1e6:
        text = f"{value:.4g}"
        return text if "e" not in text else f"{value:.0f}"
    return f"{value:.3g}"


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


def ratio_in(
    num: Ref, den: Ref, lo: float | None = None, hi: float | None = None, strict: bool = False
) -> Rule:
    """``num / den`` within [lo, hi] (an open side when None; exclusive when ``strict``)."""
    test = f"{num.label} / {den.label} {_bounds(lo, hi, strict)}"

    def decide(values: Values) -> Outcome:
        a, b = values[num], values[den]
        ratio = a / b
        numbers = f"{num.label} = {fmt(a)}, {den.label} = {fmt(b)}: ratio {ratio:.3f}"
        return Outcome(_inside(ratio, lo, hi, strict), numbers)

    return Rule((num, den), test, decide)


def in_range(
    ref: Ref, lo: float | None = None, hi: float | None = None, strict: bool = False
) -> Rule:
    """A single measurement within [lo, hi] (exclusive when ``strict``)."""
    test = f"{ref.label} {_bounds(lo, hi, strict)}"

    def decide(values: Values) -> Outcome:
        value = values[ref]
        return Outcome(_inside(value, lo, hi, strict), f"{ref.label} = {fmt(value)}")

    return Rule((ref,), test, decide)


def lowest(target: Ref, others: tuple[Ref, ...]) -> Rule:
    """``target`` strictly below every one of ``others``."""
    test = f"{target.label} below each of " + ", ".join(o.label for o in others)

    def decide(values: Values) -> Outcome:
        shown = ", ".join(f"{r.label} = {fmt(values[r])}" for r in (target, *others))
        holds = all(values[target] < values[other] for other in others)
        return Outcome(holds, shown)

    return Rule((target, *others), test, decide)


def all_of(*rules: Rule) -> Rule:
    """Every one of ``rules`` holds (their needs and tests joined)."""
    needs = tuple(dict.fromkeys(ref for rule in rules for ref in rule.needs))
    test = "; and ".join(rule.test for rule in rules)

    def decide(values: Values) -> Outcome:
        outcomes = [rule.decide(values) for rule in rules]
        numbers = "; ".join(o.numbers for o in outcomes)
        return Outcome(all(o.holds for o in outcomes), numbers)

    return Rule(needs, test, decide)


def greater(a: Ref, b: Ref, or_equal: bool = False) -> Rule:
    """``a`` strictly above ``b`` (or at least ``b`` when ``or_equal``)."""

    def decide(values: Values) -> Outcome:
        x, y = values[a], values[b]
        holds = x >= y if or_equal else x > y
        return Outcome(holds, f"{a.label} = {fmt(x)}, {b.label} = {fmt(y)}")

    return Rule((a, b), f"{a.label} {'at least' if or_equal else 'above'} {b.label}", decide)


@dataclass(frozen=True)
class EachRef(Ref):
    """Every key of ``source`` that starts with ``key`` (``e05/var_over_d@``), by key."""

    def get(self, results: Results) -> dict[str, float] | None:
        """The matching numbers, or ``None`` when there is none."""
        record = results.metrics.get(self.source, {})
        found = {k: results.value(self.source, k) for k in record if k.startswith(self.key)}
        numbers = {k: v for k, v in found.items() if v is not None}
        return numbers or None

    def where(self) -> str:
        """Where the values are read from."""
        return f"{self.source}.json: {self.key}*"


def each_in_range(ref: EachRef, lo: float, hi: float) -> Rule:
    """Every value matched by ``ref`` within [lo, hi]."""

    def decide(values: Values) -> Outcome:
        found = values[ref]
        shown = ", ".join(f"{k.removeprefix(ref.key)}: {fmt(v)}" for k, v in found.items())
        holds = all(lo <= v <= hi for v in found.values())
        return Outcome(holds, f"{ref.label} by {shown}")

    return Rule((ref,), f"{ref.label} {_bounds(lo, hi)} at every point", decide)
