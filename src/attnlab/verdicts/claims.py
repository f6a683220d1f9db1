"""Every claim of the experiment catalogue, and its verdict computed from the measurements.

The claims are data in the catalogue (:mod:`attnlab.catalogue`): each carries the story's
own words, the rule that decides it (the measurements it needs and a threshold stated in
numbers) and ``reading``: how the threshold reads the story's words ("about four times",
"barely", "a wide margin"). :mod:`attnlab.verdicts.claim_rules` builds each rule by name. No
verdict is written by hand: :func:`judge` says *holds*, *does not hold* or *inconclusive*
from the numbers by the rule's named test (:mod:`attnlab.verdicts.rules`), *not run* when
a measurement is missing, or *stale* when a run it reads was left out (made under other
params or by other code) or is missing beside runs that were read: a claim is decided
from runs of one code generation, all of them, or not at all. The thresholds were fixed
before any result was looked at and reviewed once, before any several-seed result existed
(docs/catalogue.md, How a claim is decided); each change is written in its reading
("review:").
"""

from __future__ import annotations

from collections.abc import Mapping

from attnlab.catalogue import Experiment, experiments
from attnlab.verdicts.claim_rules import build_rule
from attnlab.verdicts.decisions import NOT_RUN, STALE, Claim, Verdict
from attnlab.verdicts.rules import Measurements, Outcome

SHOWN_AWAITED = 4  # awaited runs named in a stale verdict's evidence; the rest counted


def catalogue_claims(entries: Mapping[str, Experiment] | None = None) -> tuple[Claim, ...]:
    """Every claim of ``entries`` (default: the catalogue's experiments), in their order."""
    return tuple(
        Claim(spec.id, key, spec.says, build_rule(spec), spec.reading)
        for key, entry in (experiments() if entries is None else entries).items()
        for spec in entry.claims
    )


def judge(claim: Claim, results: Measurements) -> Verdict:
    """Decide ``claim`` from ``results``.

    *Stale* when a run it reads is awaited (:meth:`Measurements.awaiting`), *not run*
    when a measurement is missing and nothing was read, else by the claim's rule.
    """
    values = {ref: ref.get(results) for ref in claim.rule.needs}
    missing = [ref for ref, value in values.items() if value is None]
    runs = results.awaiting((ref.source, ref.exact) for ref in claim.rule.needs)
    if runs.awaited and (runs.left_out or len(runs.awaited) < runs.total):
        named = ", ".join(runs.awaited[:SHOWN_AWAITED])
        more = len(runs.awaited) - SHOWN_AWAITED
        named += f" and {more} more" if more > 0 else ""
        return Verdict(claim, STALE, f"awaiting {len(runs.awaited)} of {runs.total} runs: {named}")
    if missing:
        shown = "; ".join(f"{ref.label} ({ref.where(results)})" for ref in missing)
        return Verdict(claim, NOT_RUN, f"missing: {shown}")
    try:
        outcome: Outcome = claim.rule.decide(values)
    except (ZeroDivisionError, ValueError) as err:
        return Verdict(claim, NOT_RUN, f"cannot be decided from these numbers: {err}")
    return Verdict(
        claim, outcome.status, outcome.numbers, outcome.n, outcome.interval, outcome.seeds_needed
    )


def judge_all(results: Measurements, claims: tuple[Claim, ...] | None = None) -> list[Verdict]:
    """Every claim's verdict, in the catalogue's order (``claims``: these instead)."""
    return [judge(claim, results) for claim in claims or catalogue_claims()]
