"""The lab's science: every claim of docs/catalogue.md decided from the measurements.

Each claim of the experiment catalogue (:mod:`attnlab.catalogue`) is built into a rule
(:mod:`attnlab.verdicts.claim_rules`: the statistical tests of :mod:`attnlab.verdicts.rules`
over :mod:`attnlab.verdicts.stats`, and E17's attention-map checks of
:mod:`attnlab.verdicts.winograd_claims`) and judged from what the pipeline measured
(:func:`judge_all`): *holds*, *does not hold*, *inconclusive* or *not run*, with the numbers
that decided it. The same claims are decided again under each alternative protocol
(:mod:`attnlab.verdicts.robustness`), and each Optuna study is answered against the
catalogue's choice (:mod:`attnlab.verdicts.sweep_answers`, :mod:`attnlab.verdicts.sweep_check`).
Everything here takes measurements and returns verdicts as data; the report lays them out.
"""

from attnlab.verdicts.claims import (
    CLAIMS,
    NOT_RUN,
    STALE,
    STATUSES,
    Claim,
    Verdict,
    judge,
    judge_all,
)
from attnlab.verdicts.rules import FAILS, HOLDS, INCONCLUSIVE, Measurements

__all__ = [
    "CLAIMS",
    "FAILS",
    "HOLDS",
    "INCONCLUSIVE",
    "NOT_RUN",
    "STALE",
    "STATUSES",
    "Claim",
    "Measurements",
    "Verdict",
    "judge",
    "judge_all",
]
