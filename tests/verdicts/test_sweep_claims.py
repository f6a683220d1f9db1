"""Each study's best-trial check, a claim of the catalogue like any other: ``sweeps.<study>``.

"The study's best trial beats the catalogue's choice", paired by seed on the 95 %
t-interval of the mean log-ratio of the whole-split val/ppl of ``sweep-check/<study>``'s
runs and the study variant's own.
"""

import pytest

from attnlab.report import Results
from attnlab.verdicts import FAILS, HOLDS, INCONCLUSIVE, NOT_RUN, catalogue_claims, decide, judge

CHOICE = [100.0, 100.0, 100.0]
CHECK = {claim.id: claim for claim in catalogue_claims()}["sweeps.dk"]


def _results(best: list[float] | None, choice: list[float] | None = CHOICE) -> Results:
    metrics = {}
    if best is not None:
        metrics["sweep-check/dk/eval"] = {s: {"val/ppl": v} for s, v in enumerate(best, 1)}
    if choice is not None:
        metrics["dk-128-scaled/eval"] = {s: {"val/ppl": v} for s, v in enumerate(choice, 1)}
    return Results(metrics=metrics)


@pytest.mark.parametrize(
    ("best", "status", "interval"),
    [
        ([90.0, 91.0, 89.0], HOLDS, "[0.8755, 0.9252]"),  # 10 % lower under every seed
        ([110.0, 111.0, 109.0], FAILS, "[1.075, 1.125]"),  # worse under every seed
        (CHOICE, FAILS, "[1, 1]"),  # the best trial is the choice: the same runs, ratio 1
        ([95.0, 105.0, 99.0], INCONCLUSIVE, "[0.8789, 1.128]"),  # straddles 1: seed noise
    ],
)
def test_the_verdict_is_decided_on_the_paired_interval(best, status, interval):
    verdict = judge(CHECK, _results(best))
    assert (verdict.status, verdict.n, verdict.interval) == (status, 3, interval)
    assert "ppl(dk's best)" in verdict.evidence and "ppl(dk-128-scaled)" in verdict.evidence


def test_only_the_seeds_both_sides_have_are_paired():
    verdict = judge(CHECK, _results([90.0, 91.0], CHOICE))
    assert (verdict.status, verdict.n) == (HOLDS, 2)


@pytest.mark.parametrize(("best", "choice"), [(None, CHOICE), ([90.0, 91.0], None)])
def test_it_is_not_run_while_either_side_is_missing(best, choice):
    verdict = judge(CHECK, _results(best, choice))
    assert verdict.status == NOT_RUN and verdict.evidence.startswith("missing: ")


def test_decide_counts_the_checks_among_every_verdict():
    decided = decide(_results([90.0, 91.0, 89.0]))
    by_id = {v.claim.id: v for v in decided.verdicts}
    assert by_id["sweeps.dk"].status == HOLDS
    assert by_id["sweeps.warmup"].status == NOT_RUN
    assert [v.claim.id for v in decided.verdicts] == [c.id for c in catalogue_claims()]
