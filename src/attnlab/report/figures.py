"""The report's figures: matplotlib on an Agg canvas, each returned as an inline image.

Every figure becomes a ``data:image/png;base64`` URI, so the page carries its figures with
it and opens offline. Figures are PNG with a 256-colour palette rather than SVG: a curve
panel with a dozen lines is 150-200 KB as SVG and a tenth of that as a palette PNG, and a
report of some twenty-five figures should stay well under a megabyte. The encoding is
deterministic (no date or software stamp; Pillow's median-cut palette has no randomness):
rendering the same numbers twice gives the same bytes, and the committed report diffs
cleanly. Figures other stages drew are re-encoded the same way (PNG) or inlined as they
are (SVG). A trained measurement is drawn with its seeds: a bar or point at the mean,
the 95 % t-interval as an error bar, each seed as a dot; a curve as the mean over seeds
with the min-max band of the seeds around it.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path

import matplotlib
import matplotlib.style
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FormatStrFormatter, NullLocator
from PIL import Image

from attnlab.report.inputs import Point
from attnlab.verdicts.stats import Seed, Summary

matplotlib.use("Agg")
MAX_POINTS = 300  # a curve is drawn as at most this many bucket means
DPI = 110  # the page shows figures at about their natural size; this keeps text sharp
PALETTE_COLOURS = 256


def matplotlib_defaults() -> AbstractContextManager:
    """The style matplotlib ships for the figures drawn inside, whatever the process set.

    Optuna's plots set a style for the whole process (``plt.style.use("ggplot")``) and
    leave it: a report drawn after them in the same process would differ from one drawn
    alone, and from the committed page.
    """
    return matplotlib.style.context("default")


def palette_png(png: bytes) -> bytes:
    """A PNG flattened onto white and reduced to a 256-colour palette.

    Plots are a few flat colours plus anti-aliasing, so the palette is visually lossless
    and the file about a third of matplotlib's RGBA output. Transparent pixels become
    white (not black, which a plain RGBA-to-RGB conversion would give).
    """
    with Image.open(io.BytesIO(png)) as image:
        rgba = image.convert("RGBA")
    flat = Image.new("RGBA", rgba.size, "white")
    flat.alpha_composite(rgba)
    reduced = flat.convert("RGB").quantize(PALETTE_COLOURS, method=Image.Quantize.MEDIANCUT)
    out = io.BytesIO()
    reduced.save(out, format="PNG", optimize=True)
    return out.getvalue()


def _png_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def to_data_uri(fig: Figure) -> str:
    """The figure as an inline palette-PNG data URI, with no date or software stamp."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI, facecolor="white", metadata={"Software": None})
    return _png_uri(palette_png(buffer.getvalue()))


def file_data_uri(path: Path) -> str:
    """A PNG (re-encoded as a palette PNG) or SVG file another stage drew, as a data URI."""
    if path.suffix == ".svg":
        return "data:image/svg+xml;base64," + base64.b64encode(path.read_bytes()).decode("ascii")
    return _png_uri(palette_png(path.read_bytes()))


def _plain_log_y(ax: Axes) -> None:
    """A log y axis labelled 300, 400 ... rather than 3 x 10^2."""
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax.yaxis.set_minor_formatter(FormatStrFormatter("%g"))
    ax.tick_params(axis="y", which="minor", labelsize=7)


def bucket_means(points: Sequence[Point], limit: int = MAX_POINTS) -> list[Point]:
    """At most ``limit`` points: the mean step and value of consecutive equal buckets.

    A per-step loss is noise at the scale of a figure; bucket means show its trend
    without drawing thousands of segments.
    """
    if len(points) <= limit:
        return list(points)
    size = -(-len(points) // limit)  # ceil
    buckets = [points[i : i + size] for i in range(0, len(points), size)]
    return [(sum(s for s, _ in b) / len(b), sum(v for _, v in b) / len(b)) for b in buckets]


Band = tuple[list[float], list[float], list[float], list[float]]  # step, mean, min, max


def seed_band(runs: Mapping[Seed, Sequence[Point]]) -> Band:
    """The mean, min and max over seeds at every step all seeds recorded, bucketed.

    Each of the four series is at most :data:`MAX_POINTS` bucket means long.
    """
    by_seed = [dict(points) for points in runs.values()]
    steps = sorted(set.intersection(*(set(points) for points in by_seed)))
    rows = [[seed[step] for seed in by_seed] for step in steps]
    series = [
        bucket_means([(step, stat(row)) for step, row in zip(steps, rows, strict=True)])
        for stat in (lambda r: sum(r) / len(r), min, max)
    ]
    return ([s for s, _ in series[0]], *([v for _, v in points] for points in series))


def curves(
    train: Mapping[str, Mapping[Seed, Sequence[Point]]],
    val: Mapping[str, Mapping[Seed, Sequence[Point]]],
    title: str,
) -> Figure:
    """Train loss (bucket means) and validation perplexity against step, one line a row.

    Each row's line is its mean over seeds; the shaded band spans the seeds' min to max.
    """
    panels = [(train, "train loss (nats), bucket means"), (val, "val/ppl (curve subset)")]
    panels = [(data, label) for data, label in panels if data]
    fig = Figure(figsize=(5.2 * len(panels), 3.8), layout="constrained")
    for i, (data, label) in enumerate(panels):
        ax = fig.add_subplot(1, len(panels), i + 1)
        for name, runs in data.items():
            steps, mean, low, high = seed_band(runs)
            (line,) = ax.plot(steps, mean, lw=1.2, label=f"{name} (n = {len(runs)})")
            if len(runs) > 1:
                ax.fill_between(steps, low, high, color=line.get_color(), alpha=0.2, lw=0)
        ax.set(xlabel="step", ylabel=label)
        if "ppl" in label:
            _plain_log_y(ax)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(title)
    return fig


def log_step_curves(
    rows: Mapping[str, Mapping[Seed, Sequence[Point]]],
    title: str,
    ylabel: str,
    chance: float | None = None,
) -> Figure:
    """A measurement against step on a log axis: one colour per row, one line per seed.

    The axis is symmetric-log (linear below 1), so step 0 has a place at the left. The
    first seed's line is the bold one. A row without a curve is in the legend as ``not
    run``; ``chance`` draws a dashed line at that value.
    """
    fig = Figure(figsize=(5.6, 3.8), layout="constrained")
    ax = fig.add_subplot()
    steps: set[float] = set()
    for i, (name, runs) in enumerate(rows.items()):
        if not runs:
            ax.plot([], [], color=f"C{i}", ls=":", label=f"{name}: not run")
        for j, points in enumerate(runs.values()):
            steps.update(s for s, _ in points)
            ax.plot(
                [s for s, _ in points],
                [v for _, v in points],
                "o-",
                color=f"C{i}",
                ms=3 if j == 0 else 2,
                lw=1.4 if j == 0 else 0.7,
                alpha=1.0 if j == 0 else 0.5,
                label=f"{name} (n = {len(runs)})" if j == 0 else None,
            )
    if chance is not None:
        ax.axhline(chance, color="0.4", ls="--", lw=0.8, label=f"chance ({chance:g})")
    ax.set_xscale("symlog", base=2, linthresh=1)
    ax.xaxis.set_minor_locator(NullLocator())  # symlog's minor ticks crowd the linear part
    if steps:
        ax.set_xticks(sorted(steps), [f"{s:g}" for s in sorted(steps)], fontsize=7, rotation=45)
        ax.set_xlim(0, max(steps))
    ax.set(title=title, xlabel="step (log scale)", ylabel=ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    return fig


def _error(summary: Summary) -> float:
    return summary.half_width or 0.0


def bars(
    labels: Sequence[str],
    series: Mapping[str, Sequence[Summary | None]],
    title: str,
    ylabel: str,
    log: bool = False,
) -> Figure:
    """Grouped bars at the mean over seeds, the 95 % interval as error bars, seeds as dots.

    One group per label, one bar per series; a missing value is a gap.
    """
    fig = Figure(figsize=(max(5.0, 0.9 * len(labels) + 2), 3.8), layout="constrained")
    ax = fig.add_subplot()
    width = 0.8 / max(1, len(series))
    for j, (name, values) in enumerate(series.items()):
        xs = [i + (j - (len(series) - 1) / 2) * width for i in range(len(labels))]
        kept = [(x, v) for x, v in zip(xs, values, strict=True) if v is not None]
        drawn = ax.bar(
            [x for x, _ in kept],
            [v.mean for _, v in kept],
            width,
            label=name,
            yerr=[_error(v) for _, v in kept],
            capsize=3,
            ecolor="0.25",
        )
        ax.bar_label(drawn, fmt="%.3g", fontsize=7)
        dots = [(x, value) for x, v in kept for value in v.values.values()]
        ax.plot(
            [x for x, _ in dots],
            [y for _, y in dots],
            "o",
            ms=2.5,
            color="black",
            label="a seed" if j == 0 and dots else None,
        )
    ax.set_xticks(range(len(labels)), labels, rotation=20 if len(labels) > 5 else 0, ha="right")
    ax.set(ylabel=ylabel, title=title)
    if log:
        _plain_log_y(ax)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    return fig


def lines(
    xs: Sequence[float],
    series: Mapping[str, Sequence[Summary | float | None]],
    title: str,
    xlabel: str,
    ylabel: str,
    logx: bool = False,
    logy: bool = False,
) -> Figure:
    """One line per series over shared ``xs`` (a missing value breaks nothing: it is skipped).

    A :class:`Summary` point is drawn at its mean with its 95 % interval as an error bar.
    """
    fig = Figure(figsize=(5.6, 3.8), layout="constrained")
    ax = fig.add_subplot()
    for name, values in series.items():
        kept = [(x, v) for x, v in zip(xs, values, strict=True) if v is not None]
        centres = [v.mean if isinstance(v, Summary) else v for _, v in kept]
        errors = [_error(v) if isinstance(v, Summary) else 0.0 for _, v in kept]
        ax.errorbar([x for x, _ in kept], centres, yerr=errors, fmt="o-", capsize=3, label=name)
    if logx:
        ax.set_xscale("log", base=2)
    if logy:
        _plain_log_y(ax)
    ax.set_xticks(list(xs), [f"{x:g}" for x in xs])
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def heatmap(
    rows: Sequence[Sequence[float]],
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    title: str,
) -> Figure:
    """Attention weights as a heatmap, each cell printed when the grid is small."""
    size = (0.45 * len(col_labels) + 2.0, 0.28 * len(rows) + 1.5)
    fig = Figure(figsize=size, layout="constrained")
    ax = fig.add_subplot()
    image = ax.imshow(rows, cmap="Blues", vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(len(col_labels)), col_labels, rotation=60, ha="right", fontsize=8)
    ax.set_yticks(range(len(row_labels)), row_labels, fontsize=8)
    for i, row in enumerate(rows):
        for j, weight in enumerate(row):
            if weight >= 0.05:
                colour = "white" if weight > 0.6 else "black"
                ax.text(j, i, f"{weight:.2f}", ha="center", va="center", fontsize=6, color=colour)
    fig.colorbar(image, ax=ax, fraction=0.03, label="attention weight")
    ax.set_title(title, fontsize=10)
    return fig


def scatter(
    xs: Sequence[float], ys: Sequence[float], title: str, xlabel: str, ylabel: str, logx: bool
) -> Figure:
    """One point per trial: a swept parameter against the objective."""
    fig = Figure(figsize=(4.6, 3.4), layout="constrained")
    ax = fig.add_subplot()
    ax.scatter(xs, ys, s=18, alpha=0.8)
    if logx:
        ax.set_xscale("log")
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    ax.grid(alpha=0.3)
    return fig


# One panel of :func:`along_curves`: its y label, whether its y axis is logarithmic, and
# per row label, per seed, the (step, value) points at the kept steps.
AlongPanel = tuple[str, bool, Mapping[str, Mapping[Seed, Sequence[Point]]]]


def along_curves(panels: Sequence[AlongPanel], title: str) -> Figure:
    """Measurements at the steps kept along training, one panel per quantity.

    One colour per row: its first seed a line with markers, every other seed a thin line
    of the same colour. The step axis is logarithmic (base 2) past step 1 and linear
    below, so step 0, the initialisation, is on it.
    """
    fig = Figure(figsize=(5.2 * len(panels), 3.8), layout="constrained")
    for i, (label, logy, data) in enumerate(panels):
        ax = fig.add_subplot(1, len(panels), i + 1)
        for name, runs in data.items():
            seeds = sorted(runs)
            first = runs[seeds[0]]
            (line,) = ax.plot(
                [s for s, _ in first], [v for _, v in first], "o-", ms=3, lw=1.4,
                label=f"{name} (seed {seeds[0]}; n = {len(seeds)})",
            )  # fmt: skip
            for seed in seeds[1:]:
                points = runs[seed]
                ax.plot(
                    [s for s, _ in points], [v for _, v in points], lw=0.7, alpha=0.5,
                    color=line.get_color(),
                )  # fmt: skip
        ax.set_xscale("symlog", base=2, linthresh=1)
        ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))  # 0, 1, 2, 4 ... not 2^k
        ax.set(xlabel="step (log scale past 1)", ylabel=label)
        if logy:
            _plain_log_y(ax)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(title)
    return fig
