"""An alias row (params ``aliases``) has no files of its own and reads its variant's runs.

P0's block is E02's last row, E08's d_k = 32 divided row and E18's one block: one run,
trained once as ``ladder-layernorm``. The report shows each row under its experiment's
name, from that run's files, and says which run it reads.
"""

import json

from report_fabricate import ALIASES, inputs, write_run

from attnlab.report import load_results
from attnlab.report.aggregates import aggregates
from attnlab.report.headline import headline
from attnlab.stages.report import report_of
from attnlab.verdicts import HOLDS, NOT_RUN, judge_all


def _section(markdown: str, experiment: str) -> str:
    return markdown.split(f"## {experiment}:", 1)[1].split("\n## ", 1)[0]


def _eval(reports, variant: str, seed: int) -> dict:
    return json.loads((reports / f"metrics/{variant}/seed-{seed}/eval.json").read_text())


def test_the_catalogues_aliases_are_p0s_block():
    assert ALIASES == {"dk-block-32-scaled": "ladder-layernorm", "depth-1": "ladder-layernorm"}


def test_an_alias_row_reads_its_variants_metrics_and_curves(tmp_path):
    reports = write_run(tmp_path / "reports", only={"E02", "E18"})
    assert not (reports / "metrics/depth-1").exists()  # nothing trained under the alias
    results = load_results(inputs(reports))
    shared = {seed: _eval(reports, "ladder-layernorm", seed)["val/ppl"] for seed in (1, 2)}
    assert results.per_seed("depth-1/eval", "val/ppl") == shared
    assert results.per_seed("dk-block-32-scaled/eval", "val/ppl") == shared
    assert results.curve("depth-1", "train/loss") == results.curve("ladder-layernorm", "train/loss")
    assert results.curve("depth-1", "train/loss")  # a curve, not two empty ones

    report = report_of(inputs(reports))
    e18 = _section(report.markdown, "E18")
    assert "| shared runs (params aliases) | depth-1: same run as ladder-layernorm |" in e18
    assert "| rows trained | 2 of 2 |" in e18
    one_block = next(line for line in e18.splitlines() if line.startswith("| 1 |"))
    assert "not run" not in one_block
    verdicts = {v.claim.id: v for v in report.verdicts}
    # E18.2 compares two blocks with one: decided, the one block being ladder-layernorm.
    assert verdicts["E18.2"].status != NOT_RUN
    # The headline and the summary hold each trained run once, under its variant's name.
    assert "depth-1" not in report.headline and "ladder-layernorm" in report.headline
    assert not any(source.startswith("depth-1/") for source in report.summary)


def test_the_variants_evaluation_carries_its_aliases_measurements(tmp_path):
    reports = write_run(tmp_path / "reports", only={"E02"})
    assert any(
        key.startswith("trained/scores/std/") for key in _eval(reports, "ladder-layernorm", 1)
    )
    e09 = _section(report_of(inputs(reports)).markdown, "E09")
    assert "| dk-block-32-scaled | 32 | yes |" in e09  # E09's row of the d_k = 32 head


def test_a_claim_missing_an_alias_row_names_its_variants_file(tmp_path):
    reports = write_run(tmp_path / "reports", only={"E18"})  # depth-2 alone
    verdict = next(v for v in judge_all(load_results(inputs(reports))) if v.claim.id == "E18.2")
    assert verdict.status == NOT_RUN
    assert "(ladder-layernorm/eval.json: val/ppl)" in verdict.evidence


def test_files_under_an_alias_name_are_ignored_and_reported(tmp_path):
    """A record of before the alias (depth-1 trained on its own) must not count twice."""
    reports = write_run(tmp_path / "reports", only={"E02", "E18"})
    stale = reports / "metrics/depth-1/seed-1/eval.json"
    stale.parent.mkdir(parents=True)
    stale.write_text(json.dumps({"val/ppl": 1.0, "train/ppl": 1.0, "seed": 1}))
    results = load_results(inputs(reports))
    assert "depth-1/eval" not in results.metrics
    assert results.value("depth-1/eval", "val/ppl") == results.value(
        "ladder-layernorm/eval", "val/ppl"
    )
    assert any("depth-1/eval: ignored, depth-1 is an alias of ladder-layernorm" in p
               for p in results.problems)  # fmt: skip
    assert "depth-1" not in headline(results, []) and "depth-1/eval" not in aggregates(results)


def test_without_the_alias_the_row_is_not_run(tmp_path):
    """The alias is what fills the row: with no aliases, nothing is trained as depth-1."""
    reports = write_run(tmp_path / "reports", only={"E02", "E18"})
    bare = inputs(reports)
    bare = type(bare)(
        bare.metrics, bare.curves, bare.tables, bare.figures, bare.sweeps, bare.params
    )
    verdicts = {v.claim.id: v.status for v in report_of(bare).verdicts}
    assert verdicts["E18.2"] == NOT_RUN and HOLDS in verdicts.values()
