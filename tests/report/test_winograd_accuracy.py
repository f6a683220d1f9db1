"""Winograd accuracy along training in the report: from hand-made curves, a missing one not run."""

import re

from report_fabricate import inputs

from attnlab.report import figures
from attnlab.runs import write_curve
from attnlab.stages.report import report_of

STEPS = (0, 1, 2, 4, 8, 16, 20)


def _curve(reports, variant: str, seed: int, accuracy: list[float]) -> None:
    path = reports / f"curves/winograd/{variant}/seed-{seed}/accuracy.csv"
    path.parent.mkdir(parents=True)
    write_curve(path, list(zip(STEPS, accuracy, strict=True)), "accuracy")


def test_the_leaky_section_shows_two_models_and_names_the_third_not_run(tmp_path):
    reports = tmp_path / "reports"
    _curve(reports, "leaky-average", 1337, [0.5, 0.5, 0.52, 0.6, 0.8, 0.95, 1.0])
    _curve(reports, "leaky-average", 1338, [0.4, 0.5, 0.5, 0.55, 0.7, 0.9, 0.97])
    _curve(reports, "leaky-one-block", 1337, [0.45, 0.5, 0.5, 0.5, 0.625, 0.75, 0.875])
    report = report_of(inputs(reports))
    table = report.markdown.split("Held-out accuracy along training, E16, leaky")[1]
    lines = [line for line in table.splitlines() if line.startswith("|")][:5]
    assert lines[0] == "| model | " + " | ".join(f"step {s}" for s in STEPS) + " |"
    # The first seed's values (1337), rounded to two places; the missing model not run.
    assert lines[2] == "| average | 0.50 | 0.50 | 0.52 | 0.60 | 0.80 | 0.95 | 1.00 |"
    assert lines[3] == "| 1 block | 0.45 | 0.50 | 0.50 | 0.50 | 0.62 | 0.75 | 0.88 |"
    assert lines[4] == "| 2 blocks | " + " | ".join(["not run"] * len(STEPS)) + " |"
    assert "E16, leaky: accuracy along training" in report.index_html
    # E17 has no curve: no table and no figure, and no error.
    assert "Held-out accuracy along training, E17" not in report.markdown
    assert "E17, closed: accuracy along training" not in report.index_html
    assert not re.search(r"accuracy.*unreadable", report.markdown)


def _rows(missing: bool):
    rows = {
        "average": {1: [(0, 0.5), (1, 0.5), (2, 0.75)], 2: [(0, 0.5), (1, 0.6), (2, 0.7)]},
        "one block": {1: [(0, 0.4), (1, 0.9), (2, 1.0)]},
    }
    if missing:
        rows["two blocks"] = {}
    return rows


def test_the_figure_has_a_log_step_axis_and_a_not_run_entry_and_the_same_bytes_twice():
    fig = figures.log_step_curves(_rows(missing=True), "E16", "held-out accuracy", chance=0.5)
    ax = fig.axes[0]
    assert ax.get_xscale() == "symlog"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "1", "2"]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["average (n = 2)", "one block (n = 1)", "two blocks: not run", "chance (0.5)"]
    assert len(ax.lines) == 3 + 1 + 1  # a line per seed, the not-run entry, chance
    again = figures.log_step_curves(_rows(missing=True), "E16", "held-out accuracy", chance=0.5)
    assert figures.to_data_uri(fig) == figures.to_data_uri(again)
    other = figures.log_step_curves(_rows(missing=False), "E16", "held-out accuracy", chance=0.5)
    assert figures.to_data_uri(other) != figures.to_data_uri(fig)
