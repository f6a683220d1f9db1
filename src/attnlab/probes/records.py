"""How probe results are recorded: DVC metrics as flat JSON, tables as tidy TSV.

Every probe result (E03-E07, E10, E12, E14, E15, E19) offers ``metrics()``, a flat mapping
of slash-namespaced names (``e05/var_over_d@64``) that ``dvc metrics show`` reads (written
by :func:`attnlab.paths.write_metrics`), and ``table()``, one dict per row of its tidy
table (written by :func:`write_table`).
"""

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

Value = float | int | str | bool | None


class ProbeResult(Protocol):
    """What every probe returns: its metrics and its table."""

    def metrics(self) -> dict[str, Value]:
        """Flat, slash-namespaced metric names to numbers (or short strings)."""
        ...

    def table(self) -> list[dict[str, Value]]:
        """The tidy table: one dict per row, the same keys in every row."""
        ...


def _cell(value: Value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def write_table(path: Path, rows: Sequence[Mapping[str, Value]]) -> None:
    """Write ``rows`` as a TSV with a header line; floats to six significant digits.

    Raises:
        ValueError: no rows, or rows whose keys differ (a tidy table has one schema).
    """
    if not rows:
        raise ValueError(f"{path}: a table needs at least one row")
    header = list(rows[0])
    for row in rows:
        if list(row) != header:
            raise ValueError(f"{path}: row keys {list(row)} differ from the header {header}")
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(header)
        writer.writerows([_cell(row[key]) for key in header] for row in rows)
