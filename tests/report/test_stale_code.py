"""A record written by other code is left out and named, and every claim reading it is stale.

The committed record once counted runs trained by code 165 commits old as current, because
only params were checked. Here the fabricated run (report_fabricate: seeds 1 and 2, every
record stamped with the code of this checkout) gets records of other code.
"""

import dataclasses
import json

from report_fabricate import SEEDS, inputs, write_run

from attnlab import result_code
from attnlab.stages.report import report_of
from attnlab.verdicts import HOLDS, NOT_RUN, STALE


def _restamp(path, **parts) -> None:
    """Make ``path``'s record state other code for ``parts`` (part -> digest)."""
    record = json.loads(path.read_text())
    record[result_code.CODE]["parts"].update(parts)
    path.write_text(json.dumps(record))


def _verdicts(report) -> dict:
    return {v.claim.id: v for v in report.verdicts}


def test_a_run_trained_by_other_code_is_left_out_and_its_claims_are_stale(tmp_path):
    reports = write_run(tmp_path / "reports", only={"E02", "probes"})
    current = _verdicts(report_of(inputs(reports)))
    assert current["E02.1"].status != STALE and current["E03.1"].status == HOLDS

    _restamp(reports / "metrics/ladder-average/seed-2/train.json", training="0" * 12)
    probe = reports / "metrics/probes/e03.json"
    probe.write_text(json.dumps({"e03/last_row_max_abs_diff": 0.0}))  # no stamp at all
    report = report_of(inputs(reports))

    assert "ladder-average seed 2: train.json trained by other code (training/ changed)" in (
        report.stale
    )
    assert any(
        line.startswith("probes/e03: written before records stated") for line in report.stale
    )
    verdicts = _verdicts(report)
    e02_1 = verdicts["E02.1"]  # average against no context: 4 runs, one of other code
    assert e02_1.status == STALE
    assert e02_1.evidence == "awaiting 1 of 4 runs: ladder-average seed 2"
    assert verdicts["E03.1"].status == STALE
    assert verdicts["E03.1"].evidence == "awaiting 1 of 1 runs: probes/e03"
    unaffected = [c for c, v in verdicts.items() if "ladder-average" not in v.variants]
    for claim in unaffected:
        if claim != "E03.1":
            assert verdicts[claim].status == current[claim].status, claim
    assert report.headline["claims"]["stale"] == sum(v.status == STALE for v in report.verdicts)
    for page in (report.markdown, report.index_html):
        assert "The record&#x27;s state" in page or "The record's state" in page
        assert "1 records: trained by other code (training/ changed)" in page
        assert "attnlab repro --time-limit 2h" in page


def test_a_seed_the_params_expect_and_nothing_holds_is_awaited(tmp_path):
    reports = write_run(tmp_path / "reports", only={"E02"})
    expecting = dataclasses.replace(
        inputs(reports), seeds={"ladder-average": (*SEEDS, 3), "ladder-no-context": SEEDS}
    )
    e02_1 = _verdicts(report_of(expecting))["E02.1"]
    assert e02_1.status == STALE
    assert e02_1.evidence == "awaiting 1 of 5 runs: ladder-average seed 3"


def test_a_claim_none_of_whose_runs_exists_is_not_run_not_stale(tmp_path):
    reports = write_run(tmp_path / "reports", only={"probes"})
    expecting = dataclasses.replace(inputs(reports), seeds={"ladder-average": SEEDS})
    report = report_of(expecting)
    assert _verdicts(report)["E02.1"].status == NOT_RUN
    assert report.stale == []
