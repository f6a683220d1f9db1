"""What E09 and E11 measured at the steps kept along training: curves and their table.

The evaluate stage records, for the rows of an experiment whose catalogue entry lists
``along`` measurements, each key's value at every kept step (``along`` of ``eval.json``,
:mod:`attnlab.evaluation.measurements`). Here each row becomes a curve against a log-step axis,
the first seed drawn boldly and every other seed beside it (index.html), and the same
numbers become a table of step against row, the mean over seeds with its interval
(index.html and REPORT.md, which carries no figures), so "runs away and stays collapsed"
(E09) and "grows with depth" (E11) are read off a curve instead of two points.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attnlab.catalogue import Experiment
from attnlab.evaluation.names import GRAD_NORMS, SCORE_STATS
from attnlab.report import figures
from attnlab.report.content import MISSING, Image, Section, Table, spread_cell
from attnlab.report.inputs import Point, Results
from attnlab.verdicts.stats import Seed, summarise

# Per along measurement, what is drawn: a key (or a prefix ending in "/", averaged over
# blocks and heads at each step), its axis label, a short column name, and a log y axis.
QUANTITIES: dict[str, tuple[tuple[str, str, str, bool], ...]] = {
    SCORE_STATS: (
        ("scores/std/", "score std (mean over blocks, heads)", "score std", True),
        ("attn/onehot_frac/", "share of one-hot rows", "one-hot", False),
    ),
    GRAD_NORMS: (
        ("grad_norm/ratio_last_first", "grad norm last / first block", "last/first", True),
        (
            "grad_norm_weights_rms/ratio_last_first",
            "the same, weight matrices' RMS",
            "last/first (weights RMS)",
            True,
        ),
    ),
}


def series(along: Mapping[str, Any], key: str) -> list[Point]:
    """``key``'s (step, value) points in one record's ``along`` (a prefix: the mean of its keys)."""
    metrics = along.get("metrics", {})
    if key.endswith("/"):
        columns = [values for name, values in metrics.items() if name.startswith(key)]
    else:
        columns = [metrics[key]] if key in metrics else []
    if not columns:
        return []
    steps = along.get("steps", [])
    return [(step, sum(c[i] for c in columns) / len(columns)) for i, step in enumerate(steps)]


def along_runs(results: Results, variant: str, key: str) -> dict[Seed, list[Point]]:
    """Per seed of ``variant``'s evaluation, the points of ``key`` along training."""
    found = {}
    for seed, record in results.runs(f"{variant}/eval").items():
        along = record.get("along")
        points = series(along, key) if isinstance(along, dict) else []
        if points:
            found[seed] = points
    return found


def _labels(entry: Experiment) -> dict[str, str]:
    """Each row's label, or its variant where two rows share a label (E09's two 1024s)."""
    labels = [row.label for row in entry.rows]
    return {
        row.variant: row.label if labels.count(row.label) == 1 else row.variant
        for row in entry.rows
    }


def _table(panels: list[tuple[str, dict[str, dict[Seed, list[Point]]]]]) -> Table:
    """Step against (row, quantity): the mean over seeds and its interval at each step."""
    columns = [(short, row, runs) for short, data in panels for row, runs in data.items()]
    at = [{seed: dict(points) for seed, points in runs.items()} for _, _, runs in columns]
    steps = sorted({step for runs in at for points in runs.values() for step in points})
    rows = []
    for step in steps:
        cells = []
        for runs in at:
            values = {seed: points[step] for seed, points in runs.items() if step in points}
            cells.append(spread_cell(summarise(values)) if values else MISSING)
        rows.append((str(step), *cells))
    header = ("step", *(f"{row}: {short}" for short, row, _ in columns))
    note = "Each kept step's measurement on the same fixed batch; the mean over seeds."
    return Table("Along training", header, tuple(rows), note)


def along_section(results: Results, section: Section, entry: Experiment) -> None:
    """Add the along-training figure and table of ``entry``'s section, when measured."""
    labels = _labels(entry)
    drawn: list[figures.AlongPanel] = []
    tabled = []
    for name in entry.along:
        for key, label, short, logy in QUANTITIES[name]:
            data = {labels[r.variant]: along_runs(results, r.variant, key) for r in entry.rows}
            data = {row: runs for row, runs in data.items() if runs}
            if data:
                drawn.append((label, logy, data))
                tabled.append((short, data))
    if not drawn:
        return
    fig = figures.along_curves(drawn, f"{section.id} along training")
    caption = (
        "At each step whose weights the training kept (log-spaced): the first seed with "
        "markers, every other seed as a thin line of its colour."
    )
    section.figures.append(Image(f"{section.id} along training", figures.to_data_uri(fig), caption))
    section.tables.append(_table(tabled))
