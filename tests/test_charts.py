"""The chart files ``dvc plots show`` draws: one per catalogue chart, from the curves on disk.

Each test writes a few curve files where the train stages write them and reads back what
:mod:`attnlab.charts` (and the ``charts`` stage) made of them: only the rows trained, in
the catalogue's order, under the seed asked for, an alias row under its own name.
"""

import subprocess
import sys
from itertools import pairwise
from pathlib import Path

import pytest
import yaml

from attnlab import paths
from attnlab.catalogue import CATALOGUE_FILE, catalogue, parse_catalogue
from attnlab.charts import POINTS_PER_ROW, chart_csv, chart_runs, curve_file, thinned, write_charts
from attnlab.config.files import params_files, read_params_mapping
from attnlab.errors import AttnlabError

ROOT = Path(__file__).resolve().parents[1]
ALIASES = read_params_mapping(ROOT / "params.yaml")["aliases"]
SEED = 1337


def _chart(name: str):
    (found,) = [chart for chart in catalogue().charts if chart.name == name]
    return found


def _write(path: Path, column: str, values: list[float]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"step,{column}\n" + "".join(f"{s},{v!r}\n" for s, v in enumerate(values)))


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """An empty project root as the working folder: the stages' paths are relative to it."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_chart_holds_the_rows_trained_in_catalogue_order_from_one_seed(project):
    loss = _chart("E02-train-loss")
    # Written out of order, and a second seed of one row: neither shows in the chart.
    _write(curve_file(loss, "ladder-mlp", SEED), "loss", [6.5, 6.25])
    _write(curve_file(loss, "ladder-mlp", SEED + 1), "loss", [1.0, 2.0])
    _write(curve_file(loss, "ladder-no-context", SEED), "loss", [6.9, 0.1 + 0.2])
    written = write_charts(catalogue(), ALIASES, SEED)
    assert written == [paths.chart("E02-train-loss")] == [Path("reports/charts/E02-train-loss.csv")]
    assert written[0].read_text() == (
        "variant,step,loss\n"
        "ladder-no-context,0,6.9\n"
        "ladder-no-context,1,0.30000000000000004\n"  # the curve's text, not re-rounded
        "ladder-mlp,0,6.5\n"
        "ladder-mlp,1,6.25\n"
    )
    # The other seed's run is a chart of its own when that seed is asked for.
    assert "ladder-mlp,1,2.0\n" in chart_csv(loss, catalogue(), ALIASES, SEED + 1)


def test_a_long_curve_is_drawn_from_every_kth_step_and_its_last(project):
    loss = _chart("E02-train-loss")
    _write(curve_file(loss, "ladder-mlp", SEED), "loss", [float(s) for s in range(3001)])
    _write(curve_file(loss, "ladder-average", SEED), "loss", [1.0] * POINTS_PER_ROW)
    rows = chart_csv(loss, catalogue(), ALIASES, SEED).splitlines()[1:]
    steps = {
        name: [int(line.split(",")[1]) for line in rows if line.startswith(name + ",")]
        for name in ("ladder-mlp", "ladder-average")
    }
    # 3001 points at most 500 a row: every 7th (ceil(3001 / 500)) from step 0, then step 3000.
    assert steps["ladder-mlp"] == [*range(0, 3000, 7), 3000]
    assert "ladder-mlp,3000,3000.0" in rows  # a kept step keeps its own value
    assert steps["ladder-average"] == list(range(POINTS_PER_ROW))  # short enough: whole


@pytest.mark.parametrize("length", [0, 1, 2, 499, 500, 501, 999, 1000, 1001, 3001, 12345])
def test_thinning_keeps_the_ends_and_at_most_one_point_over_the_bound(length):
    points = [[str(step), "0"] for step in range(length)]
    kept = thinned(points, 500)
    assert len(kept) <= 501 and kept == sorted(kept, key=lambda p: int(p[0]))
    assert kept[:1] == points[:1] and kept[-1:] == points[-1:]
    gaps = {int(b[0]) - int(a[0]) for a, b in pairwise(kept)}
    assert max(gaps, default=0) <= -(-length // 500)  # evenly spaced, none wider than k


def test_an_alias_row_draws_its_variants_run_under_its_own_name(project):
    ppl = _chart("E18-val-ppl")
    runs = chart_runs(ppl, catalogue(), ALIASES)
    assert runs == {"depth-1": "ladder-layernorm", "depth-2": "depth-2"}  # params aliases
    _write(curve_file(ppl, "ladder-layernorm", SEED), "val/ppl", [80.0, 40.0])
    _write(curve_file(ppl, "depth-2", SEED), "val/ppl", [70.0])
    write_charts(catalogue(), ALIASES, SEED)
    assert paths.chart("E18-val-ppl").read_text() == (
        "variant,step,val/ppl\ndepth-1,0,80.0\ndepth-1,1,40.0\ndepth-2,0,70.0\n"
    )
    # The E02 ladder's own row reads the same run, under its own name.
    e02 = paths.chart("E02-val-ppl").read_text().splitlines()
    assert e02 == ["variant,step,val/ppl", "ladder-layernorm,0,80.0", "ladder-layernorm,1,40.0"]


def test_the_winograd_chart_joins_both_experiments_rows(project):
    chart = _chart("E16-E17-winograd-loss")
    assert curve_file(chart, "closed-two-blocks", SEED) == paths.winograd_curve(
        "closed-two-blocks", SEED
    )
    _write(paths.winograd_curve("leaky-average", SEED), "loss", [3.0])
    _write(paths.winograd_curve("closed-two-blocks", SEED), "loss", [2.0])
    (written,) = write_charts(catalogue(), ALIASES, SEED)
    assert (
        written.read_text() == "variant,step,loss\nleaky-average,0,3.0\nclosed-two-blocks,0,2.0\n"
    )


def test_a_cut_catalogue_charts_what_it_lists_and_nothing_trained_writes_nothing(project):
    raw = yaml.safe_load(CATALOGUE_FILE.read_text())
    raw["charts"] = [{"experiments": ["E13"], "curve": "val_ppl"}]
    cut = parse_catalogue(raw, "cut")
    assert write_charts(cut, ALIASES, SEED) == []
    (chart,) = cut.charts
    _write(curve_file(chart, "positions-rope", SEED), "val/ppl", [9.0])
    _write(curve_file(_chart("E13-train-loss"), "positions-rope", SEED), "loss", [2.0])
    assert write_charts(cut, ALIASES, SEED) == [paths.chart("E13-val-ppl")]
    assert sorted(paths.CHARTS.iterdir()) == [paths.chart("E13-val-ppl")]


def test_a_malformed_or_mismatched_curve_is_an_error_naming_its_file(project):
    chart = _chart("E13-train-loss")
    bad = curve_file(chart, "positions-none", SEED)
    _write(bad, "loss", [1.0])
    bad.write_text("loss\n1.0\n")
    with pytest.raises(AttnlabError, match=rf"{bad}: expected the columns step,<value>"):
        chart_csv(chart, catalogue(), ALIASES, SEED)
    _write(bad, "loss", [1.0])
    other = curve_file(chart, "positions-rope", SEED)
    _write(other, "val/ppl", [1.0])
    with pytest.raises(AttnlabError, match=rf"{other}: its column 'val/ppl' is not .*'loss'"):
        chart_csv(chart, catalogue(), ALIASES, SEED)


@pytest.mark.parametrize("seed", [["--seed", str(SEED)], []], ids=["--seed", "its default"])
def test_the_stage_replaces_the_folder_and_prints_what_it_drew(project, seed):
    assert read_params_mapping(ROOT / "params.yaml")["seeds"][0] == SEED  # the default seed
    for path in params_files(ROOT / "params.yaml"):
        (project / path.name).write_text(path.read_text())
    stale = project / "reports" / "charts" / "E99-gone.csv"
    stale.parent.mkdir(parents=True)
    stale.write_text("variant,step,loss\n")
    for variant in ("norm-post", "norm-pre"):
        _write(curve_file(_chart("E11-train-loss"), variant, SEED), "loss", [4.0])
    # norm-post's run is the committed record's (it states the params' 1000 steps); norm-pre's
    # was trained at another budget: a stale run, left out and named.
    record = ROOT / paths.train_metrics("norm-post", SEED)
    for variant, steps in (("norm-post", 1000), ("norm-pre", 5)):
        metrics = project / paths.train_metrics(variant, SEED)
        metrics.parent.mkdir(parents=True)
        metrics.write_text(record.read_text().replace('"steps": 1000,', f'"steps": {steps},'))
    done = subprocess.run(
        [sys.executable, "-m", "attnlab.stages.charts", *seed],
        capture_output=True,
        text=True,
        check=True,
    )
    charts = len(catalogue().charts)
    assert done.stdout.splitlines() == [
        f"charts: left out as stale: norm-pre seed {SEED}: train.json steps 5, params give 1000",
        f"charts: 1 of {charts} have a run -> reports/charts",
    ]
    assert [p.name for p in (project / "reports" / "charts").iterdir()] == ["E11-train-loss.csv"]
    drawn = (project / "reports" / "charts" / "E11-train-loss.csv").read_text()
    assert "norm-post,0,4.0" in drawn and "norm-pre" not in drawn
