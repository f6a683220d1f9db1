"""Heatmaps of the Winograd model's attention at the query position (E17 of docs/catalogue.md).

Drawn from the record :func:`attnlab.winograd.maps.maps_record` writes, so a figure shows
exactly the numbers in the table beside it. Matplotlib's object-oriented API on an Agg
canvas: no pyplot, no display, no global state.
"""

from pathlib import Path

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from attnlab.catalogue.winograd import ADJECTIVE_POSITION


def _heatmap(ax: Axes, weights: np.ndarray, columns: list[str], rows: list[str]) -> None:
    """Draw one (rows, keys) block of weights in [0, 1], each cell labelled in percent."""
    ax.imshow(weights, cmap="Blues", vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(len(columns)), columns, rotation=60, ha="right")
    ax.set_yticks(range(len(rows)), rows)
    for (i, j), weight in np.ndenumerate(weights):
        if weight >= 0.005:
            colour = "white" if weight > 0.5 else "black"
            ax.text(j, i, f"{100 * weight:.0f}", ha="center", va="center", fontsize=7, c=colour)


def _row_label(adjective: str, row: dict) -> str:
    return f"{adjective} ({row['role']}) -> {row['answer']}"


def draw_blocks(record: dict, adjectives: list[str], path: Path) -> None:
    """Per adjective in ``adjectives``, one panel: each block's row over the sentence."""
    rows = {adj: record["adjectives"][adj] for adj in adjectives}
    n_blocks = len(rows[adjectives[0]]["blocks"])
    fig = Figure(figsize=(9, 1.4 + 0.7 * n_blocks * len(rows)), layout="constrained")
    axes = fig.subplots(len(rows), 1, squeeze=False)[:, 0]
    for ax, (adjective, row) in zip(axes, rows.items(), strict=True):
        labels = [f"block {b + 1}" for b in range(n_blocks)]
        _heatmap(ax, np.array(row["blocks"]), row["tokens"], labels)
        ax.set_title(f"... too {adjective} , so the ?  (model: {row['answer']})", fontsize=9)
    fig.suptitle(
        f"{record['variant']}: attention of the query 'the' before the answer, heads averaged",
        fontsize=10,
    )
    _save(fig, path)


def draw_adjectives(record: dict, path: Path) -> None:
    """Every block's query row for every adjective, one panel per block, rows = adjectives."""
    rows = record["adjectives"]
    first = next(iter(rows.values()))
    n_blocks = len(first["blocks"])
    columns = list(first["tokens"])
    columns[ADJECTIVE_POSITION] = "<adj>"
    fig = Figure(figsize=(6.5 * n_blocks, 1.8 + 0.4 * len(rows)), layout="constrained")
    axes = fig.subplots(1, n_blocks, squeeze=False)[0]
    for block, ax in enumerate(axes):
        weights = np.array([row["blocks"][block] for row in rows.values()])  # (adjectives, keys)
        _heatmap(ax, weights, columns, [_row_label(adj, row) for adj, row in rows.items()])
        ax.set_title(f"block {block + 1}", fontsize=10)
    fig.suptitle(
        f"{record['variant']}: the {record['x']} did not cross the {record['y']} because it "
        "was too <adj> , so the ?",
        fontsize=10,
    )
    _save(fig, path)


def _save(fig: Figure, path: Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # No matplotlib version in the metadata: the same maps give the same bytes.
    fig.savefig(path, dpi=120, metadata={"Software": None})
