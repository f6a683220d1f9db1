"""The best-trial check's verdict: "the sweep's best beats the catalogue's choice", by seed."""

import dataclasses
import json

import pytest
from report_fabricate import PARAMS, inputs, stamped, write_run

from attnlab.report import Results, build_report
from attnlab.verdicts import FAILS, HOLDS, INCONCLUSIVE
from attnlab.verdicts.sweep_check import check_verdict

CHOICE = [100.0, 100.0, 100.0]


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
    verdict = check_verdict(_results(best), "dk", "dk-128-scaled")
    assert (verdict.status, verdict.n, verdict.interval) == (status, 3, interval)
    assert "ppl(sweep's best)" in verdict.evidence and "ppl(dk-128-scaled)" in verdict.evidence


def test_only_the_seeds_both_sides_have_are_paired():
    verdict = check_verdict(_results([90.0, 91.0], CHOICE), "dk", "dk-128-scaled")
    assert (verdict.status, verdict.n) == (HOLDS, 2)


@pytest.mark.parametrize(("best", "choice"), [(None, CHOICE), ([90.0, 91.0], None)])
def test_it_is_not_run_while_either_side_is_missing(best, choice):
    verdict = check_verdict(_results(best, choice), "dk", "dk-128-scaled")
    assert verdict.status == "not run" and verdict.evidence.startswith("missing: ")


def test_the_sweep_section_shows_the_verdict_beside_the_answer(tmp_path):
    reports = write_run(tmp_path / "reports", only={"sweeps"})
    for seed, (best, choice) in enumerate([(90.0, 100.0), (91.0, 100.0), (89.0, 100.0)], 1):
        for source, stage, value in (
            ("sweep-check/dk", "sweep-check", best),
            ("dk-128-scaled", "evaluate", choice),
        ):
            path = reports / "metrics" / source / f"seed-{seed}" / "eval.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(stamped(stage, {"val/ppl": value})))
    report = build_report(dataclasses.replace(inputs(reports), params=PARAMS))
    section = report.markdown.split("## sweeps: Sweeps", 1)[1]
    answer = section.index("### dk: the answer against the catalogue's choice")
    check = section.index("### dk: the best trial checked under every seed")
    assert answer < check
    table = section[check:].split("\n### ", 1)[0]
    assert "the sweep's best beats the catalogue's choice" in table
    assert "holds (n = 3, 95 % CI [0.8755, 0.9252])" in table
    assert "ppl(sweep's best) / ppl(dk-128-scaled) below 1" in table
