"""The charts ``dvc plots show`` draws: one long-format CSV per chart of the catalogue.

The catalogue's ``charts`` (docs/catalogue.md) give E02, E08, E11, E13 and E18 a train-loss
and a val/ppl chart each, and E16-E17 one of the Winograd train loss. DVC draws a folder of
plots as one chart per file and cannot merge files into one chart, so each chart is one
file (:func:`attnlab.paths.chart`) that holds every row of its experiments, one seed's run
each: ``variant,step,<value>``. The value column is the curve's own (``loss``,
``val/ppl``) and comes last, where DVC looks for y by default, so the axis says what is
plotted. An alias row draws the run of the variant it reads, under the row's own name; a
row whose run has no curve yet is left out, so a partial catalogue still charts, and so is
a row whose run is stale (its ``train.json`` states another configuration than the params
give it, :mod:`attnlab.config.fingerprint`): a chart never draws a 15-step curve beside
3000-step ones.

A curve longer than :data:`POINTS_PER_ROW` is drawn from every k-th point of it (the first
and the last always among them): the train loss logs every step, and nine rows of 3000
steps made a megabyte file that the browser draws no better than a tenth of it. The whole
curve stays in ``reports/curves``.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Collection, Mapping
from pathlib import Path

from attnlab import paths
from attnlab.catalogue import Catalogue, Chart
from attnlab.errors import AttnlabError
from attnlab.files import write_atomically

VARIANT = "variant"  # the column .dvc/plots/variants.json colours by
# Enough for a chart a few hundred pixels wide to show every bend of a curve.
POINTS_PER_ROW = 500


def curve_file(chart: Chart, run: str, seed: int) -> Path:
    """The curve file of ``run`` (a trained variant) under ``seed`` that ``chart`` draws."""
    if chart.curve == "winograd_loss":
        return paths.winograd_curve(run, seed)
    # The other curves are named as the train stage writes them (paths.TRAIN_LOSS, VAL_PPL).
    return paths.curve(paths.curves_dir(run, seed), chart.curve)


def chart_runs(chart: Chart, catalogue: Catalogue, aliases: Mapping[str, str]) -> dict[str, str]:
    """Every row of ``chart``'s experiments, in order, each once: row name -> run it draws."""
    rows = (row.variant for key in chart.experiments for row in catalogue.experiments[key].rows)
    return {row: aliases.get(row, row) for row in rows}


def _read_curve(path: Path) -> tuple[str, list[list[str]]]:
    """A curve file's value column and its ``[step, value]`` rows, as written (text)."""
    with open(path, newline="", encoding="utf-8") as handle:
        header, *points = csv.reader(handle)
    if len(header) != 2 or header[0] != "step":
        raise AttnlabError(f"{path}: expected the columns step,<value>, found {','.join(header)}")
    return header[1], points


def thinned(points: list[list[str]], most: int = POINTS_PER_ROW) -> list[list[str]]:
    """Every k-th of ``points`` from the first, k as small as keeps at most ``most``; and the last.

    A curve of ``most`` points or fewer is kept whole.
    """
    stride = max(1, -(-len(points) // most))  # ceiling division
    kept = points[::stride]
    if (len(points) - 1) % stride:
        kept.append(points[-1])  # the curve's end is the number its report quotes
    return kept


def chart_csv(
    chart: Chart,
    catalogue: Catalogue,
    aliases: Mapping[str, str],
    seed: int,
    stale: Collection[str] = (),
) -> str | None:
    """The CSV text of ``chart`` from the curves of ``seed``'s runs; ``None`` if none exists.

    The rows whose run is in ``stale`` (trained variants) are left out.

    Raises:
        AttnlabError: a curve file is malformed, or two rows' files name their value
            column differently (the message names the file).
    """
    field: str | None = None
    lines: list[list[str]] = []
    for row, run in chart_runs(chart, catalogue, aliases).items():
        path = curve_file(chart, run, seed)
        if run in stale or not path.is_file():
            continue  # stale, or not trained yet: the chart draws the rows that are current
        column, points = _read_curve(path)
        if field is not None and column != field:
            raise AttnlabError(f"{path}: its column {column!r} is not the chart's {field!r}")
        field = column
        lines.extend([row, step, value] for step, value in thinned(points))
    if field is None:
        return None
    text = io.StringIO(newline="")
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow([VARIANT, "step", field])
    writer.writerows(lines)
    return text.getvalue()


def write_charts(
    catalogue: Catalogue, aliases: Mapping[str, str], seed: int, stale: Collection[str] = ()
) -> list[Path]:
    """Write every chart of ``catalogue`` that has a current curve; the files written, in order.

    ``stale``: the trained variants whose run under ``seed`` is left out.
    """
    written = []
    for chart in catalogue.charts:
        text = chart_csv(chart, catalogue, aliases, seed, stale)
        if text is not None:
            path = paths.chart(chart.name)
            write_atomically(path, text.encode("utf-8"))
            written.append(path)
    return written
