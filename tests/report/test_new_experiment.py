"""A new experiment is data: variants in params, an entry in the catalogue, no report code.

The example of docs/adding-an-experiment.md (E20: two variants, one claim) is read from
the page, added to the project's params and catalogue, its runs' records written as the
train and evaluate stages write them, and the report rendered: the section is laid out
from the entry and its claim is decided and counted like every other.
"""

import json
import math
import re
import statistics
from pathlib import Path

import yaml
from report_fabricate import ROOT, inputs, stamped

from attnlab.catalogue import CATALOGUE_FILE, parse_catalogue
from attnlab.config import parse_params
from attnlab.config.files import read_params_mapping
from attnlab.report import build_report, load_results
from attnlab.report.sections import LAYOUTS
from attnlab.verdicts import HOLDS, decide
from attnlab.verdicts.number_format import fmt

GUIDE = ROOT / "docs" / "adding-an-experiment.md"
PPL = {"e20-two-heads": (110.0, 112.0, 111.0), "e20-eight-heads": (100.0, 101.0, 99.0)}


def _example(name: str) -> dict:
    """The YAML block after ``<!-- example: name -->`` on the guide."""
    found = re.search(rf"<!-- example: {name} -->\n```yaml\n(.*?)```", GUIDE.read_text(), re.S)
    assert found, f"{GUIDE.name} has no example {name}"
    return yaml.safe_load(found.group(1))


def _catalogue() -> dict:
    raw = yaml.safe_load(CATALOGUE_FILE.read_text())
    added = {**raw["experiments"]}
    sweeps = added.pop("sweeps")  # the sweeps stay last
    raw["experiments"] = {**added, **_example("catalogue"), "sweeps": sweeps}
    return parse_catalogue(raw, "the catalogue with E20").experiments


def _records(reports: Path) -> None:
    for variant, values in PPL.items():
        for seed, ppl in enumerate(values, 1):
            folder = reports / "metrics" / variant / f"seed-{seed}"
            folder.mkdir(parents=True)
            train = {"train/loss": 4.5 + ppl / 1000, "steps": 6, "wall_s": 2.0}
            (folder / "train.json").write_text(json.dumps(stamped("train", train)))
            measured = {"val/ppl": ppl, "train/ppl": ppl - 5, "params/total": 477696}
            (folder / "eval.json").write_text(json.dumps(stamped("evaluate", measured)))


def test_the_guides_example_is_valid_params_and_catalogue_data():
    raw = read_params_mapping(ROOT / "params.yaml")
    raw["variants"] = {**raw["variants"], **_example("params")["variants"]}
    loaded = parse_params(raw)
    assert {loaded.variant(v).model.n_head for v in PPL} == {2, 8}
    rows = _catalogue()["E20"].variants
    assert rows == list(PPL) and set(rows) <= set(loaded.variants)


def test_a_new_experiment_is_laid_out_and_decided_from_its_entry_alone(tmp_path):
    assert "E20" not in LAYOUTS  # no layout of its own
    entries = _catalogue()
    reports = tmp_path / "reports"
    _records(reports)
    found = inputs(reports)
    results = load_results(found)
    report = build_report(results, decide(results, entries), found.code, entries)
    section = report.markdown.split("## E20: Two head counts", 1)[1].split("\n## ", 1)[0]
    assert "*At d_model 128, do eight heads of 16 beat two of 64?*" in section
    table = section.split("### E20: every row", 1)[1].split("\n### ", 1)[0]
    assert "| row | parameters | train loss | val ppl | x 2 heads |" in table
    assert "| 2 heads | 477,696 |" in table and "| 111 ± " in table
    two, eight = PPL.values()
    ratio = math.exp(statistics.fmean(math.log(a / b) for a, b in zip(eight, two, strict=True)))
    assert "| 8 heads | 477,696 |" in table and f"| {fmt(ratio)} [" in table  # paired by seed
    claims = section.split("### Claims", 1)[1]
    assert "| E20.1 | eight heads beat two |" in claims and "**holds**" in claims
    verdict = next(v for v in report.verdicts if v.claim.id == "E20.1")
    assert (verdict.status, verdict.n) == (HOLDS, 3)
    assert len(report.verdicts) == 48  # the catalogue's 47 and E20.1, all in the tally
    assert report.headline["claims"]["holds"] == 1
    assert report.markdown.index("## E19:") < report.markdown.index("## E20:")
    assert report.markdown.index("## E20:") < report.markdown.index("## sweeps:")
