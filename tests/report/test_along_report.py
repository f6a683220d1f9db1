"""E09 and E11 along training in the report: curves and a table from hand-made metrics.

The fabricated runs (:mod:`report_fabricate`) give every row an ``along`` record at the
steps a run of 6 keeps; the report must draw it as an inline figure on the page and show
the same numbers as a table in the experiment's section of the page and of the Markdown.
"""

import pytest
from report_fabricate import STEPS_KEPT, inputs, write_run

from attnlab.report import figures, load_results
from attnlab.report.along_section import along_runs, series
from attnlab.stages.report import report_of


def test_a_prefix_is_the_mean_of_its_keys_at_each_step():
    along = {"steps": [0, 4], "metrics": {"a/x": [1.0, 3.0], "a/y": [3.0, 7.0], "b": [9.0, 9.0]}}
    assert series(along, "a/") == [(0, 2.0), (4, 5.0)]
    assert series(along, "b") == [(0, 9.0), (4, 9.0)]
    assert series(along, "c/") == []


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    reports = write_run(tmp_path_factory.mktemp("r") / "reports", only={"E09", "E11"})
    return report_of(inputs(reports))


@pytest.mark.parametrize(
    ("key", "column"),
    [("E09", "dk-1024-unscaled: score std"), ("E11", "post: last/first (weights RMS)")],
)
def test_the_along_table_is_in_the_experiments_section_of_page_and_markdown(report, key, column):
    section = report.markdown.split(f"## {key}:", 1)[1].split("\n## ", 1)[0]
    table = section.split("### Along training", 1)[1].split("###", 1)[0]
    header = table.strip().splitlines()[0]
    assert column in header
    steps = [line.split("|")[1].strip() for line in table.strip().splitlines()[2:] if "|" in line]
    assert steps == [str(step) for step in STEPS_KEPT]
    html = report.index_html.split(f'<section id="{key}">', 1)[1].split("</section>", 1)[0]
    assert f'alt="{key} along training"' in html and "data:image/png;base64," in html
    assert "<h3>Along training</h3>" in html


def test_every_seed_is_read_and_the_figure_renders_the_same_bytes_twice(tmp_path):
    reports = write_run(tmp_path / "reports", only={"E11"})
    results = load_results(inputs(reports))
    runs = along_runs(results, "norm-post", "grad_norm/ratio_last_first")
    assert sorted(runs) == [1, 2] and [s for s, _ in runs[1]] == list(STEPS_KEPT)
    assert runs[1][0][1] > runs[1][-1][1]  # the fabricated ratio falls with the step
    panel = [("ratio", True, {"post": runs})]
    drawn = [figures.to_data_uri(figures.along_curves(panel, "E11")) for _ in range(2)]
    assert drawn[0] == drawn[1]
