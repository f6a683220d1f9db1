"""The report's sweep section: the answer, the cost, every trial with its W&B run, the figures."""

import csv
import dataclasses
import json

from PIL import Image
from report_fabricate import PARAMS, inputs, stamped, write_run

from attnlab.report.sweep_section import OFFLINE_HINT
from attnlab.stages.report import report_of


def _sweeps_md(report) -> str:
    return report.markdown.split("## sweeps: Sweeps", 1)[1]


def _report(tmp_path, **params):
    found = inputs(write_run(tmp_path / "reports", only={"sweeps"}))
    return report_of(dataclasses.replace(found, params={**PARAMS, **params}))


def test_the_section_answers_against_the_choice_and_states_the_cost(tmp_path):
    section = _sweeps_md(_report(tmp_path))
    assert "### dk: the answer against the catalogue's choice" in section
    assert "(dk-128-scaled: d_head = 128, scale_scores = yes): val/ppl 300" in section
    assert "rank 1 of 5 completed trials" in section  # pruned and failed trials do not count
    assert "is near the best (rule: at most 5 % above" in section
    assert (
        "| dk: cost | 7 trials run of 6 asked for: 5 complete, 1 pruned, 1 failed; 7 s of "
        "training summed over trials, 4.5 s wall from the first start to the last end by "
        "2 worker(s) |"
    ) in section


def test_every_trial_is_listed_results_first_and_offline_runs_say_how_to_sync_once(tmp_path):
    report = _report(tmp_path)
    section = _sweeps_md(report)
    table = section.split("### dk: all 7 trials", 1)[1].split("\n### ", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    numbers = [r.split(" | ")[0].removeprefix("| ") for r in rows[1:]]
    assert numbers == ["2", "1", "3", "0", "4", "5", "6"]
    assert "| 5 | PRUNED |  |" in table  # a pruned trial's curve point is not its value
    assert "| run2 |" in table and "wandb.ai" not in report.index_html
    assert report.markdown.count(OFFLINE_HINT) == 1


def test_with_an_entity_every_run_links_to_its_wandb_page(tmp_path):
    report = _report(tmp_path, wandb={"entity": "team", "project": "attnlab"})
    url = "https://wandb.ai/team/attnlab/runs/run2"
    assert f'<a href="{url}">run2</a>' in report.index_html
    assert f"[run2]({url})" in report.markdown
    assert OFFLINE_HINT not in report.markdown


def test_optunas_importances_and_parallel_coordinates_come_first(tmp_path):
    reports = write_run(tmp_path / "reports", only={"sweeps"})
    for name in ("optimization_history", "slice", "parallel_coordinate", "param_importances"):
        (reports / "sweeps/dk/figures").mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (2, 2)).save(reports / f"sweeps/dk/figures/{name}.png")
    page = report_of(inputs(reports)).index_html.split('<section id="sweeps">', 1)[1]
    shown = [part.split('"', 1)[0] for part in page.split('alt="dk: ')[1:]]
    assert shown == ["param_importances", "parallel_coordinate", "optimization_history", "slice"]
    assert "Optuna&#x27;s importances" in page


def _without_the_choice_trial(reports, steps_per_trial):
    folder = reports / "sweeps/dk"
    with (folder / "trials.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    rows[2]["d_head"] = "127"  # no trial has the choice's values any more
    with (folder / "trials.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    best = json.loads((folder / "best.json").read_text())
    best["protocol"]["steps_per_trial"] = steps_per_trial
    (folder / "best.json").write_text(json.dumps(best))


def test_the_choices_own_runs_stand_in_only_under_the_studys_protocol(tmp_path):
    same = write_run(tmp_path / "same" / "reports", only={"sweeps", "E08"})
    _without_the_choice_trial(same, 6)  # the fabricated runs' steps
    section = _sweeps_md(report_of(inputs(same)))
    assert "dk-128-scaled trained under the same protocol, mean of 2 seeds" in section
    other = write_run(tmp_path / "other" / "reports", only={"sweeps", "E08"})
    _without_the_choice_trial(other, 60)  # a study at another budget than the record
    section = _sweeps_md(report_of(inputs(other)))
    assert "was not measured under this study's protocol" in section
    assert "Whether the catalogue's choice is near the best: not measured." in section


def test_the_section_answers_the_storys_question_from_the_reference_trial(tmp_path):
    dk = {**PARAMS["sweeps"]["dk"], "references": [{"d_head": 32, "scale_scores": True}]}
    section = _sweeps_md(_report(tmp_path, sweeps={"dk": dk}))
    answer = section.split("### dk: the answer against the catalogue's choice", 1)[1]
    rows = [line for line in answer.splitlines() if line.startswith("| ")]
    assert rows[1] == (  # the first sentence, under the header: the story's question
        "| Reference 0 (d_head = 32, scale_scores = yes): trial 0, val/ppl 304, rank 4 of 5 "
        "completed trials, 1.333 % above the best, trial 2 (d_head = 128, scale_scores = yes; "
        "val/ppl 300): near the best. |"
    )
    assert "run as a fixed trial before the sampled ones" in answer


def test_the_studys_check_is_among_the_sections_claims(tmp_path):
    reports = write_run(tmp_path / "reports", only={"sweeps"})
    for seed, (best, choice) in enumerate([(90.0, 100.0), (91.0, 100.0), (89.0, 100.0)], 1):
        for source, stage, value in (
            ("sweep-check/dk", "sweep-check", best),
            ("dk-128-scaled", "evaluate", choice),
        ):
            path = reports / "metrics" / source / f"seed-{seed}" / "eval.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(stamped(stage, {"val/ppl": value})))
    report = report_of(dataclasses.replace(inputs(reports), params=PARAMS))
    section = _sweeps_md(report)
    assert section.index("### dk: the answer against the catalogue's choice") < section.index(
        "### Claims"
    )
    claims = section.split("### Claims", 1)[1]
    row = next(line for line in claims.splitlines() if line.startswith("| sweeps.dk |"))
    assert "the d_k study's best trial beats the catalogue's choice" in row
    assert "ppl(dk's best) / ppl(dk-128-scaled) below 1" in row
    assert "**holds**" in row and "95 % CI [0.8755, 0.9252], n = 3" in row
