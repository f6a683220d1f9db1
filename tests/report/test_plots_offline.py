"""``dvc plots show`` renders offline through the vendored Vega (PITFALLS 10, T11)."""

import configparser
import hashlib
import json
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
VENDOR = ROOT / "vendor" / "vega"
SEED = 1337  # the first of params seeds: the run each chart shows
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


def test_dvc_config_points_at_the_template():
    config = configparser.ConfigParser()
    config.read(ROOT / ".dvc" / "config")
    template = (ROOT / ".dvc" / config["plots"]["html_template"]).resolve()
    assert template == TEMPLATE


@pytest.mark.slow
def test_dvc_plots_show_renders_offline_in_chromium(dvc_project, browser, tmp_path):
    root = dvc_project.root
    for row, start in (("no-context", 6.9), ("average", 7.0)):
        curve = root / "reports" / "curves" / f"ladder-{row}" / f"seed-{SEED}" / "train_loss.csv"
        curve.parent.mkdir(parents=True, exist_ok=True)
        curve.write_text("step,loss\n" + "".join(f"{s},{start - 0.1 * s}\n" for s in range(1, 9)))
    out = tmp_path / "plots"
    dvc_project.dvc("plots", "show", "-o", str(out))  # every definition; missing files skipped
    html = (out / "index.html").read_text()
    assert "cdn.jsdelivr" not in html and "E02 the ladder, train loss" in html
    page, errors = browser.open(out / "index.html")
    page.wait_for_selector(".vega-embed canvas, .vega-embed svg", timeout=15_000)
    drawn = page.eval_on_selector_all(".vega-embed canvas", "cs => cs.map(c => c.width)")
    assert max(drawn, default=0) > 0  # the E02 chart: its two curves exist
    page.screenshot(path=tmp_path / "plots.png", full_page=True)
    assert errors == [] and browser.left_the_machine() == []
    page.close()


def _chart(plots: dict, title: str) -> dict:
    (definition,) = plots["data"][title]
    return definition["content"]


def _write_every_charted_curve(root: Path) -> None:
    """A short curve in every file a chart of dvc.yaml lists (the first seed's runs)."""
    for chart in yaml.safe_load((ROOT / "dvc.yaml").read_text())["plots"]:
        (definition,) = chart.values()
        for name, column in definition["y"].items():
            curve = root / name.replace("${seeds[0]}", str(SEED))
            curve.parent.mkdir(parents=True, exist_ok=True)
            curve.write_text(f"step,{column}\n" + "".join(f"{s},{7 - 0.1 * s}\n" for s in range(9)))


def test_each_curve_is_plotted_once_with_one_colour_per_variant(dvc_project):
    """77 plots, two thirds of them per-stage duplicates, each line one colour: no more."""
    root = dvc_project.root
    _write_every_charted_curve(root)
    plots = json.loads(dvc_project.dvc("plots", "show", "--json").stdout)
    charts = [
        title
        for title, found in plots["data"].items()
        if any(item.get("type") == "vega" for item in found)
    ]
    defined = [
        next(iter(chart)) for chart in yaml.safe_load((ROOT / "dvc.yaml").read_text())["plots"]
    ]
    assert charts == defined  # not again as per-stage plots, one per curve file
    spec = _chart(plots, "E18 one block vs two, train loss")
    assert spec["encoding"]["color"]["field"] == "variant"
    assert spec["encoding"]["strokeDash"]["field"] == "rev"
    assert spec["encoding"]["detail"]["field"] == "filename"  # one line per run
    (derive,) = spec["transform"]
    assert derive["as"] == "variant" and "train_loss" in derive["calculate"]
    files = {row["filename"] for row in spec["data"]["values"]}
    # One block is an alias of ladder-layernorm (params aliases): the chart plots that run.
    one_block = f"ladder-layernorm/seed-{SEED}/train_loss.csv"
    assert files == {one_block, f"depth-2/seed-{SEED}/train_loss.csv"}
    # The colour is the variant: Vega's regexp, applied here, strips the seed and the file.
    (pattern,) = re.findall(r"regexp\('([^']+)'\)", derive["calculate"])
    assert {re.sub(pattern, "", name) for name in files} == {"ladder-layernorm", "depth-2"}
