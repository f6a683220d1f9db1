"""The lab's science: every claim of docs/catalogue.md decided from the measurements.

Each claim of the experiment catalogue (:mod:`attnlab.catalogue`) is built into a rule
(:mod:`attnlab.verdicts.claim_rules`: the statistical tests of :mod:`attnlab.verdicts.rules`
over :mod:`attnlab.verdicts.stats`, and E17's attention-map checks of
:mod:`attnlab.verdicts.winograd_claims`) and judged from what the pipeline measured
(:mod:`attnlab.verdicts.claims`): *holds*, *does not hold*, *inconclusive*, *stale* or
*not run*, with the numbers that decided it. The same claims are decided again under each
alternative protocol (:mod:`attnlab.verdicts.robustness`), and each Optuna study is
answered against the catalogue's choice (:mod:`attnlab.verdicts.sweep_answers`).
:func:`decide` makes every one of these decisions in one call and returns them as the
types of :mod:`attnlab.verdicts.decisions`, which is all the report reads. The rules load
on first use: a reader of the types pays for none of them.
"""

from attnlab.lazy import lazy_exports
from attnlab.verdicts.decisions import (
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    NOT_RUN,
    STALE,
    STATUSES,
    Answer,
    Claim,
    Decisions,
    Robustness,
    Verdict,
)

__getattr__ = lazy_exports(
    __name__,
    {
        "claims": ("catalogue_claims", "judge", "judge_all"),
        "record": ("Record", "decide"),
        "rules": ("Measurements",),
    },
)

__all__ = [
    "FAILS",
    "HOLDS",
    "INCONCLUSIVE",
    "NOT_RUN",
    "STALE",
    "STATUSES",
    "Answer",
    "Claim",
    "Decisions",
    "Measurements",
    "Record",
    "Robustness",
    "Verdict",
    "catalogue_claims",
    "decide",
    "judge",
    "judge_all",
]
