"""``dvc plots show`` renders offline through the vendored Vega (PITFALLS 10, T11)."""

import configparser
import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest

from attnlab import paths
from attnlab.catalogue import Chart, catalogue
from attnlab.charts import chart_runs, curve_file, write_charts
from attnlab.config.files import read_params_mapping

ROOT = Path(__file__).resolve().parents[2]
VENDOR = ROOT / "vendor" / "vega"
SEED = 1337  # the first of params seeds: the run each chart shows
CURVES = ("train-loss", "val-ppl")
ALIASES = read_params_mapping(ROOT / "params.yaml")["aliases"]
TEMPLATE = VENDOR / "plots-template.html"


def _inline_scripts() -> dict[str, str]:
    text = TEMPLATE.read_text(encoding="utf-8")
    return dict(re.findall(r'<script data-vendored="([^"]+)">\n(.*?)</script>', text, re.S))


def test_the_vendored_scripts_are_the_published_files():
    recorded = re.findall(
        r"\| (vega[a-z-]*) \| ([\d.]+) \| `[^`]+` \| `([0-9a-f]{64})` \|",
        (VENDOR / "README.md").read_text(),
    )
    scripts = _inline_scripts()
    assert len(recorded) == len(scripts) == 3
    for name, version, digest in recorded:
        body = scripts[f"{name} {version}"]
        assert hashlib.sha256(body.encode()).hexdigest() == digest, name


def test_the_template_loads_nothing_and_keeps_dvcs_placeholders():
    text = TEMPLATE.read_text(encoding="utf-8")
    assert text.count("{plot_divs}") == 1 and "{refresh_tag}" in text
    # With a {scripts} placeholder DVC would insert its CDN <script> tags.
    assert "{scripts}" not in text
    assert not re.search(r"""<(script|link)[^>]+(src|href)=""", text)


def test_the_charts_draw_y_on_a_log_axis():
    """val/ppl falls from ~1,000 to 30-60: on a linear axis that band is a flat line."""
    spec = json.loads((ROOT / ".dvc" / "plots" / "variants.json").read_text(encoding="utf-8"))
    assert spec["encoding"]["y"]["scale"] == {"type": "log"}


def test_dvc_config_points_at_the_template():
    config = configparser.ConfigParser()
    config.read(ROOT / ".dvc" / "config")
    template = (ROOT / ".dvc" / config["plots"]["html_template"]).resolve()
    assert template == TEMPLATE


def _write_curves(root: Path, charts: list[Chart]) -> dict[str, list[str]]:
    """A short curve for every run ``charts`` draw (the first seed's); each chart's rows."""
    rows = {}
    for chart in charts:
        runs = chart_runs(chart, catalogue(), ALIASES)
        column = "val/ppl" if chart.curve == "val_ppl" else "loss"
        for start, run in enumerate(runs.values()):
            curve = root / curve_file(chart, run, SEED)
            curve.parent.mkdir(parents=True, exist_ok=True)
            points = "".join(f"{s},{7 + start - 0.1 * s}\n" for s in range(9))
            curve.write_text(f"step,{column}\n{points}")
        rows[str(paths.chart(chart.name))] = list(runs)
    return rows


# Vega-Embed draws on a canvas; this hook, run before the page's own scripts, makes every
# chart draw as SVG instead, so that the test can count its lines and read its legend.
SVG_EMBED = """
Object.defineProperty(window, "vegaEmbed", {
  configurable: true,
  get() { return this._svgEmbed; },
  set(embed) { this._svgEmbed = (el, spec, opt) => embed(el, spec, {...opt, renderer: "svg"}); },
});
"""


@pytest.mark.slow
def test_dvc_plots_show_renders_one_line_per_variant_offline_in_chromium(
    dvc_project, browser, tmp_path
):
    root = dvc_project.root
    # The copy carries the committed record's curves; this chart test draws only its own.
    shutil.rmtree(root / "reports" / "curves")
    ladder = [c for c in catalogue().charts if c.name in ("E02-train-loss", "E02-val-ppl")]
    rows = _write_curves(root, ladder)
    dvc_project.dvc("repro", "--single-item", "charts")  # the stage, from the curves on disk
    out = tmp_path / "plots"
    dvc_project.dvc("plots", "show", "-o", str(out))
    html = (out / "index.html").read_text()
    assert "cdn.jsdelivr" not in html
    page = browser.context.new_page()
    page.add_init_script(SVG_EMBED)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    browser.requested.clear()
    page.goto((out / "index.html").as_uri())
    page.wait_for_selector(".vega-embed svg .role-legend", timeout=15_000)
    drawn = page.eval_on_selector_all(
        ".vega-embed",
        """embeds => embeds.map(e => ({
            title: e.querySelector(".role-title-text")?.textContent,
            y: [...e.querySelectorAll(".role-axis-title text")].map(t => t.textContent),
            lines: e.querySelectorAll(".mark-line path").length,
            legends: [...e.querySelectorAll(".role-legend")].map(legend =>
                [...legend.querySelectorAll(".role-legend-label text")].map(t => t.textContent)),
        }))""",
    )
    charts = {chart["title"]: chart for chart in drawn if chart["legends"]}
    for title, variants in rows.items():
        assert charts[title]["lines"] == len(variants) == 9, title  # one line per row
        # A colour per row, in the catalogue's order, and a dash per revision.
        assert charts[title]["legends"] == [variants, ["workspace"]], title
    # The ladder's last run is also a row of E08 and E18, each under its alias of it.
    also = {"E08": "dk-block-32-scaled", "E18": "depth-1"}
    expected = {str(paths.chart(f"{e}-{c}")): [row] for e, row in also.items() for c in CURVES}
    assert {t: c["legends"][0] for t, c in charts.items() if t not in rows} == expected
    assert charts["reports/charts/E02-val-ppl.csv"]["y"] == ["step", "val/ppl"]
    assert charts["reports/charts/E02-train-loss.csv"]["y"] == ["step", "loss"]
    page.screenshot(path=tmp_path / "plots.png", full_page=True)
    assert errors == [] and browser.left_the_machine() == []
    page.close()


def test_each_chart_is_one_file_plotted_once_with_one_colour_per_row(dvc_project, monkeypatch):
    root = dvc_project.root
    rows = _write_curves(root, catalogue().charts)
    monkeypatch.chdir(root)
    write_charts(catalogue(), ALIASES, SEED)  # what the charts stage writes
    plots = json.loads(dvc_project.dvc("plots", "show", "--json").stdout)
    charts = [
        name for name, found in plots["data"].items() if any(i["type"] == "vega" for i in found)
    ]
    assert sorted(charts) == sorted(rows)  # not again as per-stage plots, one per curve file
    for name, variants in rows.items():
        (definition,) = plots["data"][name]
        spec = definition["content"]
        assert spec["encoding"]["color"] == {
            "field": "variant",
            "type": "nominal",
            "title": "variant",
            "sort": None,  # the legend in the catalogue's order
        }
        assert spec["encoding"]["strokeDash"]["field"] == "rev"  # plots diff: a dash per rev
        y = "loss" if name.endswith("-loss.csv") else "val/ppl"
        assert spec["encoding"]["y"]["field"] == spec["encoding"]["y"]["title"] == y, name
        assert [r["variant"] for r in spec["data"]["values"][::9]] == variants, name
    # One block is an alias of ladder-layernorm (params aliases): that run, under its name.
    (e18,) = plots["data"]["reports/charts/E18-train-loss.csv"]
    values = e18["content"]["data"]["values"]
    for row, run in {"depth-1": "ladder-layernorm", "depth-2": "depth-2"}.items():
        curve = (root / f"reports/curves/{run}/seed-{SEED}/train_loss.csv").read_text()
        drawn = [f"{r['step']},{r['loss']}" for r in values if r["variant"] == row]
        assert drawn == curve.splitlines()[1:], row
