"""The report renders from a full tiny-budget run, a partial one and an empty one.

The fabricated runs train every variant under two seeds (report_fabricate.SEEDS).
"""

import json
import re
import shutil
from html.parser import HTMLParser

import matplotlib
import optuna
import pytest
from matplotlib import pyplot as plt
from report_fabricate import SEEDS, VARIANTS, inputs, stamped, write_run

from attnlab.catalogue import experiments
from attnlab.report import load_results
from attnlab.stages.report import report_of
from attnlab.verdicts import FAILS, HOLDS, INCONCLUSIVE, NOT_RUN, catalogue_claims

CLAIMS = catalogue_claims()


class _Page(HTMLParser):
    """The parts of a page the tests read: sections, image sources, links, verdict cells."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: list[str] = []
        self.images: list[str] = []
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        found = dict(attrs)
        if tag == "section":
            self.sections.append(found.get("id", ""))
        elif tag == "img":
            self.images.append(found["src"])
        elif tag in ("a", "link", "script"):
            self.links.append(found.get("href") or found.get("src") or "")


def _parse(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    return page


@pytest.fixture(scope="module")
def full_run(tmp_path_factory):
    return write_run(tmp_path_factory.mktemp("full") / "reports")


@pytest.fixture(scope="module")
def full(full_run):
    return report_of(inputs(full_run))


def test_a_full_run_has_every_section_in_the_storys_order_and_every_claim_judged(full):
    page = _parse(full.index_html)
    ids = list(experiments())
    assert page.sections == ["record", "claims", "inconclusive", *sorted(ids, key=_story_order)]
    assert len(full.verdicts) == len(CLAIMS)
    statuses = {v.claim.id: v.status for v in full.verdicts}
    # The fabricated run measures every claim's inputs except the E03-E12 probes it skips
    # and the sweeps' best-trial checks.
    undecided = sorted(c for c, s in statuses.items() if s == NOT_RUN)
    assert undecided == ["E04.1", "E10.1", "E12.1", "E19.1", "sweeps.dk", "sweeps.warmup"]
    assert {HOLDS, FAILS, INCONCLUSIVE} <= set(statuses.values())
    for claim in CLAIMS:
        assert claim.text in full.index_html.replace("&#x27;", "'"), claim.id
        assert claim.id in full.markdown


def _story_order(entry_id: str) -> int:
    return {"P0": 0, "sweeps": 100}.get(entry_id) or int(entry_id[1:])


def test_the_page_is_self_contained(full):
    page = _parse(full.index_html)
    assert page.images and all(src.startswith("data:image/") for src in page.images)
    assert all(link.startswith("#") or link == "demo.html" for link in page.links)
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", full.index_html)
    assert "<script" not in full.index_html and "@import" not in full.index_html


def test_every_verdict_shows_its_threshold_and_the_numbers(full):
    for verdict in full.verdicts:
        section = full.index_html.split(f'<section id="{verdict.claim.experiment}">', 1)[1]
        row = section.split(f">{verdict.claim.id}<", 1)[1].split("</tr>", 1)[0]
        assert verdict.status in row
        assert verdict.claim.rule.test.split(" ")[0] in row.replace("&#x27;", "'")


def test_the_ladders_table_and_the_protocol_come_from_the_metrics_files(full):
    markdown = full.markdown
    ladder = markdown.split("## E02: The ladder", 1)[1].split("\n## ", 1)[0]
    assert "| average-residual |" in ladder and "| layernorm |" in ladder
    assert "| budget scale | 0.002 (params.yaml) |" in ladder
    assert "| rows trained | 9 of 9 |" in ladder
    assert "| hardware | cpu; precision 32-true; world size 1 |" in ladder


def test_a_partial_run_says_not_run_and_never_crashes(tmp_path):
    report = report_of(inputs(write_run(tmp_path / "reports", only={"E02", "probes"})))
    statuses = {v.claim.experiment: set() for v in report.verdicts}
    for verdict in report.verdicts:
        statuses[verdict.claim.experiment].add(verdict.status)
    assert NOT_RUN not in statuses["E02"]
    for experiment in ("E08", "E09", "E11", "E13", "E14", "E16", "E17", "E18"):
        assert statuses[experiment] == {NOT_RUN}, experiment
    nav = report.index_html.split("<nav>", 1)[1].split("</nav>", 1)[0]
    for title in ("E11: Pre-norm vs post-norm", "E13: Positions and length extrapolation"):
        assert f"{title}</a> <span class=badge-small>not run" in nav, title
    e11 = report.markdown.split("## E11:", 1)[1].split("\n## ", 1)[0]
    assert "12 blocks, 1000 steps" not in e11  # no table of "not run"s
    assert "Not run: no measurement of this experiment exists yet." in report.markdown
    assert "Not run yet" in report.demo_html


def test_an_empty_run_and_unreadable_files_still_render(tmp_path):
    empty = report_of(inputs(tmp_path / "nothing"))
    assert {v.status for v in empty.verdicts} == {NOT_RUN}
    reports = write_run(tmp_path / "reports", only={"E02"})
    (reports / "metrics/ladder-mlp/seed-2/eval.json").write_text("{ not json")
    (reports / "curves/ladder-mlp/seed-2/train_loss.csv").write_text("step\n1\n")
    report = report_of(inputs(reports))
    assert "ladder-mlp/seed-2/eval.json: unreadable" in report.index_html
    assert "Files that could not be read" in report.markdown
    mlp = next(v for v in report.verdicts if v.claim.id == "E02.8")
    assert mlp.status == INCONCLUSIVE and mlp.n == 1  # seed 1 is left, alone
    (reports / "metrics/ladder-mlp/seed-1/eval.json").write_text("[]")
    mlp = next(v for v in report_of(inputs(reports)).verdicts if v.claim.id == "E02.8")
    assert mlp.status == NOT_RUN


def test_rendering_is_deterministic(full, full_run):
    again = report_of(inputs(full_run))
    assert again.index_html == full.index_html
    assert again.markdown == full.markdown and again.demo_html == full.demo_html


def test_rendering_is_the_same_after_optuna_drew_in_the_process(full, full_run):
    # Optuna's plots switch the whole process to ggplot's style and leave it so.
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(lambda trial: trial.suggest_float("x", 0.0, 1.0), n_trials=3)
    with matplotlib.rc_context():  # the style Optuna sets ends with this test
        optuna.visualization.matplotlib.plot_optimization_history(study)
        plt.close("all")
        assert matplotlib.rcParams["axes.facecolor"] != "white"  # ggplot's grey
        again = report_of(inputs(full_run))
    assert again.index_html == full.index_html


def test_the_demo_embeds_the_maps_as_data_that_cannot_close_its_script(tmp_path):
    reports = write_run(tmp_path / "reports", only={"winograd"})
    report = report_of(inputs(reports))
    island = report.demo_html.split('id="winograd-data">', 1)[1].split("</script>", 1)[0]
    assert '"E17, closed, 2 blocks"' in island and '"tired"' in island
    assert "Not run yet" in report.demo_html  # the fallback text stays in the page's code
    assert len(VARIANTS) > 20


def test_tables_show_the_mean_the_interval_and_n_with_the_seeds_behind_each_cell(full):
    e02 = full.index_html.split('<section id="E02">', 1)[1].split("</section>", 1)[0]
    cells = re.findall(r'<td title="(seed 1: [^"]+)">([^<]+)</td>', e02)
    assert cells, "no cell carries its per-seed values"
    detail, text = cells[0]
    assert re.fullmatch(r"seed 1: \S+, seed 2: \S+", detail)
    assert re.fullmatch(r"\S+ ± \S+ \(2\)", text)
    ladder = full.markdown.split("## E02: The ladder", 1)[1].split("\n## ", 1)[0]
    assert re.search(r"\| no-context \|[^\n]*± [^\n]*\(2\) \|", ladder)
    assert "| seeds per row | 2 (seeds 1, 2) |" in ladder


def test_each_badge_gives_its_n_and_interval_and_the_inconclusive_list_names_the_runs(full):
    e02 = next(v for v in full.verdicts if v.claim.id == "E02.3")
    assert f'{e02.status} <span class="n">n = 2, 95 % CI {e02.interval}</span>' in full.index_html
    exact = next(v for v in full.verdicts if v.claim.id == "E15.1")
    assert f'{exact.status} <span class="n">exact</span>' in full.index_html
    pending = [v for v in full.verdicts if v.status == INCONCLUSIVE]
    listed = full.index_html.split('<section id="inconclusive">', 1)[1].split("</section>")[0]
    for verdict in pending:
        row = listed.split(f">{verdict.claim.id}<", 1)[1].split("</tr>", 1)[0]
        assert all(variant in row for variant in verdict.variants), verdict.claim.id
    assert "## Inconclusive claims" in full.markdown


def test_the_aggregates_hold_mean_std_n_and_every_seed(full):
    mlp = full.summary["ladder-mlp/eval"]["val/ppl"]
    seeds = mlp["seeds"]
    assert set(seeds) == {"1", "2"} and mlp["n"] == 2
    assert mlp["mean"] == pytest.approx((seeds["1"] + seeds["2"]) / 2)
    assert mlp["std"] == pytest.approx(abs(seeds["1"] - seeds["2"]) / 2**0.5)
    assert "seed" not in full.summary["ladder-mlp/eval"]
    assert "winograd/closed-average" in full.summary and "probes/e05" not in full.summary


def test_a_stale_file_without_a_seed_beside_seeded_ones_is_ignored_and_said(tmp_path):
    reports = write_run(tmp_path / "reports", only={"E02"})
    (reports / "metrics/ladder-mlp/eval.json").write_text('{"val/ppl": 1.0}')
    report = report_of(inputs(reports))
    assert report.summary["ladder-mlp/eval"]["val/ppl"]["n"] == 2
    assert "metrics ladder-mlp/eval: a file without a seed beside per-seed files" in (
        report.markdown
    )


def test_a_trained_row_with_only_an_unseeded_file_pairs_with_nothing(tmp_path):
    # E11's warmup row once stood only as the layout before seeds; paired with every seed
    # of norm-pre, it decided E11.3 on one stale run.
    reports = write_run(tmp_path / "reports", only={"E11"})
    warmup = reports / "metrics/norm-pre-warmup"
    shutil.rmtree(warmup)
    (warmup / "eval.json").parent.mkdir(parents=True)
    (warmup / "eval.json").write_text('{"val/ppl": 1.0}')
    (reports / "metrics/probes").mkdir(exist_ok=True)
    (reports / "metrics/probes/e99.json").write_text(json.dumps(stamped("probes", {"value": 2})))
    results = load_results(inputs(reports))
    assert "norm-pre-warmup/eval" not in results.metrics
    assert results.metrics["probes/e99"][None]["value"] == 2  # an exact value stays
    assert results.metrics["norm-pre/eval"].keys() == set(SEEDS)
    assert "metrics norm-pre-warmup/eval: a trained run's file without a seed" in (
        "\n".join(results.problems)
    )
    report = report_of(inputs(reports))
    e11_3 = next(v for v in report.verdicts if v.claim.id == "E11.3")
    assert e11_3.status == NOT_RUN
