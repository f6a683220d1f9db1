"""The real ``dvc repro`` of the report stage in a throw-away clone, on a tiny-budget run."""

import json
import shutil

import pytest
from report_fabricate import SEEDS, write_run

from attnlab.verdicts import catalogue_claims

CLAIMS = catalogue_claims()

pytestmark = pytest.mark.slow


def test_repro_report_renders_then_reruns_only_when_a_metric_changes(dvc_project):
    root = dvc_project.root
    # The copy carries the committed record's runs; this test's seeds must be the only ones.
    for kind in ("metrics", "curves"):
        shutil.rmtree(root / "reports" / kind)
    reports = write_run(root / "reports")
    (reports / "figures").mkdir(exist_ok=True)

    def fabricated(params: dict) -> None:  # the params the fabricated runs state: 6 of 3000 steps
        params.update(seeds=list(SEEDS), budget={"scale": 6 / 3000})

    dvc_project.edit_params(fabricated, commit=False)
    dvc_project.run("git", "add", "-A")
    dvc_project.run("git", "commit", "-qm", "a tiny-budget run")

    done = dvc_project.dvc("repro", "--single-item", "report")
    assert dvc_project.ran_stages(done.stdout) == ["report"]
    assert f"report: {len(CLAIMS)} claims" in done.stdout
    # The rows of another step count (E08's 1500, E11's 1000) state 6 too: stale, named.
    assert "report: left out as stale: " in done.stdout  # ten named, the rest counted
    for name in ("index.html", "REPORT.md", "demo.html"):
        assert (reports / name).stat().st_size > 1000, name
    page = (reports / "index.html").read_text()
    assert "norm-pre seed 1: train.json steps 6, params give 2" in page  # every one named
    assert "ladder-" not in page.split("Every record left out", 1)[1].split("</details>", 1)[0]
    assert "E02: The ladder" in page and "data:image/png;base64," in page

    again = dvc_project.dvc("repro", "--single-item", "report")
    assert dvc_project.ran_stages(again.stdout) == []

    for seed in SEEDS:  # every seed's average exactly 4 times its no-context run
        eval_json = reports / f"metrics/ladder-average/seed-{seed}/eval.json"
        record = json.loads(eval_json.read_text())
        record["val/ppl"] = (
            4
            * json.loads(
                (reports / f"metrics/ladder-no-context/seed-{seed}/eval.json").read_text()
            )["val/ppl"]
        )
        eval_json.write_text(json.dumps(record))
    changed = dvc_project.dvc("repro", "--single-item", "report")
    assert dvc_project.ran_stages(changed.stdout) == ["report"]
    markdown = (reports / "REPORT.md").read_text()
    assert "| E02.1 | averaging makes the model about four times worse" in markdown
    e021 = next(line for line in markdown.splitlines() if line.startswith("| E02.1 |"))
    assert "**holds** (n = 2, 95 % CI [4, 4])" in e021 and "ratio 4.000" in e021
    summary = json.loads((reports / "summary/ladder-average/eval.json").read_text())
    assert summary["val/ppl"]["n"] == 2 and set(summary["val/ppl"]["seeds"]) == {"1", "2"}
