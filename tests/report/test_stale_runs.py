"""A run made under other params is left out of the report and named, never averaged.

The issue's case: ``attnlab repro -S budget.scale=0.005 train@ladder-mlp-1337
evaluate@ladder-mlp-1337`` left one 15-step run beside two 3000-step ones, and the report
averaged the three (ladder-mlp val/ppl 138 at n 3) and moved the tally, silently. Here the
fabricated run (report_fabricate: 6 steps, seeds 1 and 2) gets one such run of other params.
"""

import dataclasses
import json
import shutil

from report_fabricate import SEEDS, VARIANTS, inputs, write_run

from attnlab.config.fingerprint import EVAL, FINGERPRINT, TRAIN, RunConfiguration
from attnlab.stages.report import report_of
from attnlab.verdicts import STALE

CURRENT = {TRAIN: "1" * 16, EVAL: "2" * 16}  # the fingerprints the params give (made up)
# What report_fabricate's train.json states: 6 steps of 64 x 128 tokens in float32.
STATED = {"steps": 6, "tokens_seen": 6 * 64 * 128, "precision": "32-true"}


def _inputs(reports):
    expected = {
        variant: {s: RunConfiguration(CURRENT, {"seed": s, **STATED}) for s in SEEDS}
        for variant in VARIANTS
    }
    return dataclasses.replace(inputs(reports), configurations=expected)


def _edit(path, **changes) -> None:
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


def test_a_run_of_another_budget_is_left_out_named_and_the_tally_is_the_matching_runs(tmp_path):
    reports = write_run(tmp_path / "mixed" / "reports", only={"E02"})
    # Seed 1 states the params' fingerprints: read. Seed 2 is a 1-step run of another budget.
    run_1, run_2 = (reports / f"metrics/ladder-mlp/seed-{s}" for s in SEEDS)
    _edit(run_1 / "train.json", **{FINGERPRINT: CURRENT[TRAIN]})
    _edit(run_1 / "eval.json", **{FINGERPRINT: CURRENT[EVAL]})
    _edit(run_2 / "train.json", steps=1, tokens_seen=64 * 128, **{FINGERPRINT: "f" * 16})
    _edit(run_2 / "eval.json", **{"val/ppl": 1000.0, FINGERPRINT: "e" * 16})
    # Only the fingerprint tells this one: its evaluation was measured under other knobs.
    _edit(reports / "metrics/ladder-average/seed-2/eval.json", **{FINGERPRINT: "0" * 16})
    mixed = report_of(_inputs(reports))

    assert mixed.stale == [
        "ladder-average seed 2: eval.json configuration 0000000000000000, params give "
        "2222222222222222 (a knob of the variant, the budget or evaluate changed)",
        "ladder-mlp seed 2: train.json steps 1, params give 6",
    ]
    for page in (mixed.markdown, mixed.index_html):
        assert "Left out as stale" in page
        assert "1 records: steps 1, params give 6" in page  # the reasons, counted
    assert "ladder-mlp seed 2: train.json steps 1, params give 6" in mixed.index_html
    seed_1 = json.loads((run_1 / "eval.json").read_text())["val/ppl"]
    assert mixed.headline["ladder-mlp"]["val/ppl"] == seed_1
    assert mixed.headline["ladder-mlp"]["n"] == 1
    assert mixed.summary["ladder-mlp/eval"]["val/ppl"]["seeds"].keys() == {"1"}

    # A claim that reads a run left out is stale, never decided from the rest; the claims
    # that read neither run are decided as the same record without them decides them.
    matching = write_run(tmp_path / "matching" / "reports", only={"E02"})
    for run in ("ladder-mlp/seed-2", "ladder-average/seed-2"):
        for kind in ("metrics", "curves"):
            shutil.rmtree(matching / kind / run)
    shutil.copytree(run_1, matching / "metrics/ladder-mlp/seed-1", dirs_exist_ok=True)
    alone = report_of(_inputs(matching))
    assert alone.stale == []
    for mixed_verdict, alone_verdict in zip(mixed.verdicts, alone.verdicts, strict=True):
        if {"ladder-mlp", "ladder-average"} & set(mixed_verdict.variants):
            assert mixed_verdict.status == STALE, mixed_verdict.claim.id
            assert mixed_verdict.evidence.startswith("awaiting 1 of 4 runs: ladder-")
        else:
            assert mixed_verdict.status == alone_verdict.status, mixed_verdict.claim.id
    assert mixed.headline["claims"]["stale"] > 0
    assert {k: v for k, v in mixed.headline.items() if k != "claims"} == {
        k: v for k, v in alone.headline.items() if k != "claims"
    }


def test_a_seed_params_no_longer_list_is_stale_and_a_record_without_fingerprint_is_read(
    tmp_path,
):
    reports = write_run(tmp_path / "reports", only={"E02"})
    for kind in ("metrics", "curves"):  # seed 3: a run of a seed since dropped from params
        shutil.copytree(reports / kind / "ladder-mlp/seed-2", reports / kind / "ladder-mlp/seed-3")
    report = report_of(_inputs(reports))
    assert report.stale == ["ladder-mlp seed 3: its seed is not one of params seeds"]
    # The fabricated records predate fingerprints, as the committed record does: they
    # state the params' steps and seeds, so every other run is read.
    assert report.headline["ladder-mlp"]["n"] == len(SEEDS)
    assert report.headline["ladder-no-context"]["n"] == len(SEEDS)


def test_the_runs_of_a_variant_params_no_longer_list_are_left_out_and_named(tmp_path):
    # The case: ladder-no-context deleted from params.yaml, its records left on
    # disk; unchecked, they were averaged into a headline of a variant nothing describes.
    reports = write_run(tmp_path / "reports", only={"E02"})
    assert (reports / "metrics/ladder-no-context/seed-1/eval.json").is_file()
    known = _inputs(reports)
    deleted = {v: runs for v, runs in known.configurations.items() if v != "ladder-no-context"}
    report = report_of(dataclasses.replace(known, configurations=deleted))
    assert report.stale == [
        f"ladder-no-context seed {s}: no variant ladder-no-context in params variants"
        for s in SEEDS
    ]
    assert "ladder-no-context" not in report.headline
    assert not any(source.startswith("ladder-no-context/") for source in report.summary)
    assert report.headline["ladder-mlp"]["n"] == len(SEEDS)  # the listed variants still read


def test_a_listed_variant_with_no_current_run_keeps_its_measured_headline_row(tmp_path):
    # The case: `-S budget.scale=0.002 evaluate@ladder-mlp-1337` made every other
    # variant's records stale for the experiment's params; its headline lost them, so that
    # `dvc metrics diff HEAD <exp>` listed ~100 rows of variants it never touched.
    reports = write_run(tmp_path / "reports", only={"E02"})
    recorded = report_of(dataclasses.replace(inputs(reports), seeds=dict.fromkeys(VARIANTS, SEEDS)))
    # The experiment: ladder-mlp re-run under a changed budget, every other run now stale.
    stale = {
        v: {s: RunConfiguration(CURRENT, {"seed": s, **STATED}) for s in SEEDS} for v in VARIANTS
    }
    for seed in SEEDS:
        _edit(
            reports / f"metrics/ladder-mlp/seed-{seed}/eval.json",
            **{"val/ppl": 99.0, FINGERPRINT: CURRENT[EVAL]},
        )
        _edit(
            reports / f"metrics/ladder-mlp/seed-{seed}/train.json", **{FINGERPRINT: CURRENT[TRAIN]}
        )
    for variant in sorted({path.parents[1].name for path in reports.glob("metrics/*/*/eval.json")}):
        if variant != "ladder-mlp":
            for seed in SEEDS:
                _edit(
                    reports / f"metrics/{variant}/seed-{seed}/eval.json", **{FINGERPRINT: "0" * 16}
                )
    experiment = report_of(
        dataclasses.replace(
            _inputs(reports), configurations=stale, seeds=dict.fromkeys(VARIANTS, SEEDS)
        )
    )
    assert any(line.startswith("ladder-average seed 1:") for line in experiment.stale)
    changed = {
        row
        for row in {*recorded.headline, *experiment.headline} - {"claims"}
        if recorded.headline.get(row) != experiment.headline.get(row)
    }
    assert changed == {"ladder-mlp"}, changed
    assert experiment.headline["ladder-mlp"]["val/ppl"] == 99.0  # its current runs only
    assert experiment.headline["ladder-mlp"]["n"] == len(SEEDS)
