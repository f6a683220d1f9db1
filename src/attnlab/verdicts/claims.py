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

from dataclasses import dataclass

from attnlab.catalogue import experiments
from attnlab.verdicts.claim_rules import build_rule
from attnlab.verdicts.rules import FAILS, HOLDS, INCONCLUSIVE, Measurements, Outcome, Rule

NOT_RUN, STALE = "not run", "stale"
STATUSES = (HOLDS, FAILS, INCONCLUSIVE, STALE, NOT_RUN)
SHOWN_AWAITED = 4  # awaited runs named in a stale verdict's evidence; the rest counted


@dataclass(frozen=True)
class Claim:
    """One claim of the catalogue: its words, the rule that decides it, and why so."""

    id: str
    experiment: str
    text: str
    rule: Rule
    reading: str


@dataclass(frozen=True)
class Verdict:
    """A claim's verdict (one of :data:`STATUSES`), its evidence, and what decided it.

    ``n`` is the number of seeds the decision rests on (``None``: an exact computation or
    not run), ``interval`` the deciding interval or p-value as printed, ``seeds_needed``
    (inconclusive only) about how many seeds at this spread would decide it.
    """

    claim: Claim
    status: str
    evidence: str
    n: int | None = None
    interval: str = ""
    seeds_needed: int | None = None

    @property
    def variants(self) -> tuple[str, ...]:
        """The trained variants the claim reads (more seeds of these would decide it)."""
        return tuple(
            dict.fromkeys(variant_of(ref.source) for ref in self.claim.rule.needs if not ref.exact)
        )


def variant_of(source: str) -> str:
    """The variant a metrics source belongs to (``ladder-mlp/eval`` -> ``ladder-mlp``)."""
    return source.removeprefix("winograd/").removesuffix("/eval").removesuffix("/train")


def _catalogue() -> tuple[Claim, ...]:
    return tuple(
        Claim(spec.id, key, spec.says, build_rule(spec), spec.reading)
        for key, entry in experiments().items()
        for spec in entry.claims
    )


CLAIMS: tuple[Claim, ...] = _catalogue()


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


def judge_all(results: Measurements, claims: tuple[Claim, ...] = CLAIMS) -> list[Verdict]:
    """Every claim's verdict, in the catalogue's order."""
    return [judge(claim, results) for claim in claims]
