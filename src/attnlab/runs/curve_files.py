"""A run's curves on disk: ``step,<value>`` CSV files, DVC's plots files (P0, E16, E17).

The train stage writes its train loss here, winograd-train its loss and its held-out
accuracy; :func:`final_loss` is the loss a run's record states.
"""

import csv
import io
import math
from pathlib import Path

from attnlab.files import write_atomically


def write_curve(path: Path, points: list[tuple[int, float]], column: str = "loss") -> None:
    """Write a curve as a ``step,<column>`` CSV (a DVC plots file): the loss by default.

    Values are written with ``repr``: the shortest text that reads back as the same float,
    so two curves compare bit for bit through the file.
    """
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow(["step", column])
    writer.writerows((step, repr(value)) for step, value in points)
    write_atomically(Path(path), text.getvalue().encode("utf-8"))


def read_curve(path: Path, column: str = "loss") -> list[tuple[int, float]]:
    """Read a curve written by :func:`write_curve`."""
    with open(path, newline="", encoding="utf-8") as handle:
        return [(int(row["step"]), float(row[column])) for row in csv.DictReader(handle)]


def final_loss(points: list[tuple[int, float]], fraction: float = 0.05) -> tuple[float, int]:
    """The mean loss of the last ``fraction`` of steps (at least one), and how many.

    One batch's loss is noisy; the last 5 % of the run (150 of P0's 3000 steps) is a
    stable figure of where training ended.
    """
    if not points:
        return math.nan, 0
    window = max(1, round(len(points) * fraction))
    tail = [loss for _, loss in points[-window:]]
    return sum(tail) / window, window
