"""The robustness table: each claim of an experiment with protocols, decided under each.

Hand-made metrics trees (E11's rows and two protocols' variants, three seeds; E11's
weights-rms protocol, which re-reads the rows' own runs) check that a
protocol's verdict is the main rule and threshold applied to that protocol's runs (the same
numbers give the same verdict and interval), that the one-line reading says which choice
makes a claim hold, and that the table renders inside the experiment's section of both the
page and the Markdown, after its claims, with the main verdict still there.
"""

import copy
import json
from pathlib import Path

import pytest
import yaml
from report_fabricate import inputs, stamped, write_run

from attnlab.catalogue import CATALOGUE_FILE, experiment, parse_catalogue
from attnlab.report import load_results
from attnlab.report.render import render_html, render_markdown
from attnlab.report.robustness_table import robustness_table
from attnlab.report.sections import build_sections
from attnlab.stages.report import report_of
from attnlab.verdicts import FAILS, HOLDS, NOT_RUN, Decisions, judge_all
from attnlab.verdicts.robustness import EVERY_FAILS, claims_under_protocols

SEEDS = (1, 2, 3)
ROWS = ("norm-pre", "norm-pre-warmup", "norm-post", "norm-post-warmup")
# E11.3, pre-norm needs no warmup: ppl(pre) / ppl(pre-warmup) at most 1.05.
WORSE = {"norm-pre": 60.0, "norm-pre-warmup": 50.0, "norm-post": 200.0, "norm-post-warmup": 52.0}
EQUAL = {"norm-pre": 50.0, "norm-pre-warmup": 50.2, "norm-post": 200.0, "norm-post-warmup": 50.4}


def _e11_with_two_protocols():
    """E11 with a second protocol, dropout 0.2 (its variants: ``<row>-dropout20``)."""
    raw = copy.deepcopy(yaml.safe_load(CATALOGUE_FILE.read_text()))
    protocols = raw["experiments"]["E11"]["protocols"]
    protocols["dropout-0.2"] = {
        "choice": "dropout 0.2 on every row",
        "overrides": {"model": {"dropout": 0.2}},
        "rows": {row: f"{row}-dropout20" for row in ROWS},
    }
    return parse_catalogue(raw, "experiments.yaml").experiments["E11"]


def _write(reports: Path, variant: str, ppl: float) -> None:
    for seed in SEEDS:
        path = reports / f"metrics/{variant}/seed-{seed}/eval.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        record = {"val/ppl": ppl * (1 + 0.003 * (seed - 2)), "seed": seed}
        path.write_text(json.dumps(stamped("evaluate", record)))


def _table(reports: Path, runs: dict[str, dict[str, float]]):
    """Write ``runs`` (protocol suffix, "" for the rows: ppl by row); the E11 table."""
    for suffix, ppls in runs.items():
        for row, ppl in ppls.items():
            _write(reports, row + suffix, ppl)
    results = load_results(inputs(reports))
    verdicts = judge_all(results)
    entry = _e11_with_two_protocols()
    by_id = {v.claim.id: v for v in verdicts}
    table = robustness_table(entry, claims_under_protocols("E11", entry, results, by_id))
    return table, results, verdicts, _cells(table)


def _cells(table) -> dict[str, dict[str, str]]:
    """Each row of ``table`` by claim id, its cells by column (a protocol's name)."""
    return {row[0]: dict(zip(table.header, row, strict=True)) for row in table.rows}


def test_a_protocol_with_the_rows_numbers_gets_the_main_verdict_and_interval(tmp_path):
    _, _, verdicts, rows = _table(tmp_path, {"": WORSE, "-dropout10": WORSE})
    main = next(v for v in verdicts if v.claim.id == "E11.3")
    assert main.status == FAILS and main.n == 3
    cells = rows["E11.3"]
    main_cell = cells["catalogue's protocol"]
    assert main_cell == cells["dropout-0.1"] == f"{FAILS} (n = 3, 95 % CI {main.interval})"
    for name in ("weights-rms", "attention", "mlp", "eval-mode"):
        assert cells[name] == main_cell  # measurement protocols: val/ppl read as it is
    assert cells["dropout-0.2"] == NOT_RUN  # no runs of its variants at all
    assert cells["early-stopping"] == NOT_RUN  # no train.json: no curve's lowest point


def test_the_reading_names_the_choice_under_which_a_failing_claim_holds(tmp_path):
    table, *_, rows = _table(tmp_path, {"": WORSE, "-dropout10": EQUAL, "-dropout20": WORSE})
    cells = rows["E11.3"]
    assert cells["catalogue's protocol"].startswith(f"{FAILS} (n = 3, 95 % CI [")
    assert cells["dropout-0.1"].startswith(f"{HOLDS} (n = 3, 95 % CI [")
    assert cells["dropout-0.2"].startswith(f"{FAILS} (n = 3, 95 % CI [")
    assert cells["reading"] == (
        "holds when dropout 0.1 on every row (the story names dropout, never its rate)"
    )
    # Short column names; each choice in words in the note.
    assert table.header[2:] == (*experiment("E11").protocols, "dropout-0.2", "reading")
    assert "dropout-0.2: dropout 0.2 on every row" in table.note


def test_a_claim_failing_under_every_protocol_says_so_and_unrun_ones_say_not_run(tmp_path):
    *_, rows = _table(tmp_path, {"": WORSE, "-dropout10": WORSE, "-dropout20": WORSE})
    assert rows["E11.3"]["reading"] == EVERY_FAILS
    assert rows["E11.4"]["reading"] == NOT_RUN  # no gradient norms in these trees


def test_the_table_renders_in_its_section_after_the_main_verdicts_on_page_and_markdown(tmp_path):
    table, results, verdicts, _ = _table(
        tmp_path, {"": WORSE, "-dropout10": EQUAL, "-dropout20": WORSE}
    )
    sections = build_sections(results, Decisions(verdicts))
    markdown = render_markdown(sections, verdicts, [], {"E11": table})
    section = markdown.split("## E11:", 1)[1].split("\n## ", 1)[0]
    claims, robustness = section.split("### Claims", 1)[1].split(f"### {table.title}")
    assert "| E11.3 | pre-norm needs no warmup |" in claims  # the main verdict stays
    assert "| E11.3 | does not hold (n = 3, 95 % CI [" in robustness
    assert "| holds when dropout 0.1 on every row" in robustness
    page = render_html(sections, verdicts, [], {"E11": table})
    html = page.split('<section id="E11">', 1)[1].split("</section>", 1)[0]
    assert html.index("<h3>Claims</h3>") < html.index(f"<h3>{table.title}</h3>")
    assert '<td class="long">holds when dropout 0.1 on every row' in html
    assert table.title not in page.split('<section id="E11">', 1)[0]


def test_the_weights_rms_protocol_decides_e11_4_from_the_same_runs_other_keys(tmp_path):
    # Post-norm's ratio is below 1 over every parameter and above pre-norm's and 1 over
    # the weight matrices alone: E11.4 fails as the catalogue defines it, holds under it.
    ratios = {"norm-pre": (0.83, 0.9), "norm-post": (0.94, 1.6)}
    for variant, (every, matrices) in ratios.items():
        for seed in SEEDS:
            path = tmp_path / f"metrics/{variant}/seed-{seed}/eval.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            wiggle = 1 + 0.01 * (seed - 2)
            record = {
                "seed": seed,
                "grad_norm/ratio_last_first": every * wiggle,
                "grad_norm_weights_rms/ratio_last_first": matrices * wiggle,
            }
            path.write_text(json.dumps(stamped("evaluate", record)))
    results = load_results(inputs(tmp_path))
    verdicts = judge_all(results)
    by_id = {v.claim.id: v for v in verdicts}
    table = robustness_table(
        experiment("E11"), claims_under_protocols("E11", experiment("E11"), results, by_id)
    )
    cells = _cells(table)["E11.4"]
    assert cells["catalogue's protocol"].startswith(FAILS) and cells["dropout-0.1"] == NOT_RUN
    # train.json holds no gradient norm: not decided, rather than copied from the last step.
    assert cells["early-stopping"] == NOT_RUN
    assert cells["weights-rms"].startswith(f"{HOLDS} (n = 3")
    assert cells["reading"] == f"holds when {experiment('E11').protocols['weights-rms'].choice}"
    assert (
        "weights-rms: the rows' own runs, reading grad_norm/ as grad_norm_weights_rms/ "
        "(from eval.json)" in table.note
    )


def test_early_stopping_decides_from_each_runs_lowest_curve_point_in_train_json(tmp_path):
    # Pre-norm overfits: at its last step it is 20 % worse than with warmup (E11.3 fails),
    # at its curve's lowest point as good (E11.3 holds when stopped early).
    for variant, ppl in WORSE.items():
        _write(tmp_path, variant, ppl)
        for seed in SEEDS:
            path = tmp_path / f"metrics/{variant}/seed-{seed}/train.json"
            best = EQUAL[variant] * (1 + 0.003 * (seed - 2))
            record = {"seed": seed, "best/step": 600, "best/val/ppl": best}
            path.write_text(json.dumps(stamped("train", record)))
    results = load_results(inputs(tmp_path))
    by_id = {v.claim.id: v for v in judge_all(results)}
    found = claims_under_protocols("E11", experiment("E11"), results, by_id)
    e11_3 = next(r for r in found if r.main.claim.id == "E11.3")
    choice = experiment("E11").protocols["early-stopping"].choice
    assert e11_3.main.status == FAILS and e11_3.under[choice].status == HOLDS
    reference = {v.claim.id: v for v in judge_all(load_results(inputs(_equal(tmp_path))))}
    # The same rule on the best points as on an eval.json holding those values.
    assert e11_3.under[choice].interval == reference["E11.3"].interval
    assert e11_3.under[choice].evidence == reference["E11.3"].evidence
    assert e11_3.reading == f"holds when {choice}"


def _equal(tmp_path: Path) -> Path:
    """A tree whose eval.json holds ``EQUAL``: the independent reference of the test above."""
    reference = tmp_path / "reference"
    for variant, ppl in EQUAL.items():
        _write(reference, variant, ppl)
    return reference


@pytest.mark.parametrize("key", ["E02", "E08", "E09", "E11", "E13", "E16", "E17", "E18"])
def test_the_built_report_shows_every_protocol_in_its_experiments_section(tmp_path, key):
    report = report_of(inputs(write_run(tmp_path / "reports")))
    section = report.markdown.split(f"## {key}:", 1)[1].split("\n## ", 1)[0]
    body = section.split("### The claims under other protocols", 1)[1]
    for name, protocol in experiment(key).protocols.items():
        assert f"{name}: {protocol.choice}" in body
    for claim in experiment(key).claims:
        assert f"| {claim.id} |" in body
