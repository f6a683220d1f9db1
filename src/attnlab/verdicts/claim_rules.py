"""A catalogue claim's rule, built by name from its entry in the experiment catalogue.

The catalogue (:mod:`attnlab.catalogue`) states each claim's rule by name, the
measurements it reads and its threshold; this module turns that into the
:class:`~attnlab.verdicts.rules.Rule` that decides it. The logic of every rule lives in
:mod:`attnlab.verdicts.rules` (the statistical tests) and :mod:`attnlab.verdicts.winograd_claims`
(the attention-map checks of E17); here each name meets its arguments.
"""

from __future__ import annotations

from collections.abc import Callable

from attnlab.catalogue import Measure
from attnlab.catalogue.entries import RuleSpec
from attnlab.verdicts.rules import (
    EachRef,
    Ref,
    Rule,
    all_of,
    below_chance,
    each_in_range,
    greater,
    in_range,
    lowest,
    ratio_in,
)
from attnlab.verdicts.winograd_claims import MAP_RULES


def measure_ref(measure: Measure) -> Ref:
    """The :class:`Ref` that reads ``measure`` (an :class:`EachRef` for a key prefix)."""
    kind = EachRef if measure.each else Ref
    return kind(measure.source, measure.key, measure.label, measure.exact)


def _refs(spec: RuleSpec, count: int | None = None) -> list[Ref]:
    refs = [measure_ref(m) for m in spec.of]
    if count is not None and len(refs) != count:
        raise ValueError(f"rule {spec.rule} reads {count} measurements, not {len(refs)}")
    if count is None and len(refs) < 2:
        raise ValueError(f"rule {spec.rule} reads a target and at least one other")
    return refs


def _ratio_in(spec: RuleSpec) -> Rule:
    t = spec.threshold
    return ratio_in(*_refs(spec, 2), lo=t.lo, hi=t.hi, strict=t.strict)


def _greater(spec: RuleSpec) -> Rule:
    return greater(*_refs(spec, 2), or_equal=spec.or_equal, on=spec.compare)


def _in_range(spec: RuleSpec) -> Rule:
    t = spec.threshold
    return in_range(*_refs(spec, 1), lo=t.lo, hi=t.hi, strict=t.strict)


def _each_in_range(spec: RuleSpec) -> Rule:
    (ref,) = _refs(spec, 1)
    t = spec.threshold
    if not isinstance(ref, EachRef) or t.lo is None or t.hi is None:
        raise ValueError("each_in_range reads one key prefix (each: true) between lo and hi")
    return each_in_range(ref, t.lo, t.hi)


def _lowest(spec: RuleSpec) -> Rule:
    target, *others = _refs(spec)
    return lowest(target, tuple(others))


def _below_chance(spec: RuleSpec) -> Rule:
    if spec.threshold.hi is None:
        raise ValueError("below_chance needs the chance level as its threshold's hi")
    return below_chance(*_refs(spec, 2), chance=spec.threshold.hi)


def _all_of(spec: RuleSpec) -> Rule:
    return all_of(*(build_rule(part) for part in spec.parts))


def _maps(spec: RuleSpec) -> Rule:
    (ref,) = _refs(spec, 1)
    return MAP_RULES[spec.rule](ref.source, spec.threshold)


RULES: dict[str, Callable[[RuleSpec], Rule]] = {
    "ratio_in": _ratio_in,
    "greater": _greater,
    "in_range": _in_range,
    "each_in_range": _each_in_range,
    "lowest": _lowest,
    "below_chance": _below_chance,
    "all_of": _all_of,
    **dict.fromkeys(MAP_RULES, _maps),
}


def build_rule(spec: RuleSpec) -> Rule:
    """The rule ``spec`` names, over its measurements, with its threshold.

    Raises:
        ValueError: the rule reads another number of measurements, or lacks a bound.
    """
    return RULES[spec.rule](spec)
