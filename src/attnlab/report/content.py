"""What one section of the report holds, independent of HTML or Markdown.

A :class:`Section` is one experiment of docs/catalogue.md (or P0, or the sweeps): its
protocol lines, its tables, its figures and notes. The section builders fill them from
the measurements; :mod:`attnlab.report.render` turns them into a page and a Markdown file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from attnlab.report.results import Results
from attnlab.report.rules import fmt

MISSING = "not run"


@dataclass(frozen=True)
class Table:
    """A table of already-formatted cells; ``note`` says how to read it."""

    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    note: str = ""


@dataclass(frozen=True)
class Image:
    """A figure as a data URI, with the sentence that says what it shows."""

    title: str
    uri: str
    caption: str = ""


@dataclass
class Section:
    """One experiment's part of the report."""

    id: str
    title: str
    question: str
    protocol: list[tuple[str, str]] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    figures: list[Image] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    measured: bool = False

    @property
    def ran(self) -> bool:
        """Whether any measurement of this experiment exists."""
        return self.measured or bool(self.tables or self.figures)


def cell(value: Any, digits: str = "") -> str:
    """A measured value as a table cell: numbers formatted, absent values ``not run``."""
    if value is None:
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer() and "." not in digits:
        value = int(value)  # a count read back as a float prints as the integer it is
    if isinstance(value, int | float):
        return f"{value:{digits}}" if digits else fmt(value)
    return str(value)


def ratio_cell(a: float | None, b: float | None) -> str:
    """``a / b`` to three decimals, or ``not run``."""
    return f"{a / b:.3f}" if a is not None and b else MISSING


def tsv_table(title: str, rows: Sequence[dict[str, str]], note: str = "") -> Table | None:
    """A TSV written by another stage, its numbers shortened to four significant digits."""
    if not rows:
        return None
    header = tuple(rows[0])
    cells = tuple(tuple(_short(r.get(k, "")) for k in header) for r in rows)
    return Table(title, header, cells, note)


def _short(text: str | None) -> str:
    try:
        return fmt(float(text)) if text not in (None, "") else ""
    except ValueError:
        return str(text)


def table_if_any(
    title: str,
    header: Sequence[str],
    rows: list[tuple[str, ...]],
    note: str = "",
    labels: int = 1,
) -> list[Table]:
    """``[Table]`` when a row holds a measurement past its ``labels`` columns, else ``[]``."""
    measured = [r for r in rows if any(c != MISSING for c in r[labels:])]
    return [Table(title, tuple(header), tuple(rows), note)] if measured else []


def library_versions() -> str:
    """The versions of the libraries in this environment (the one that rendered the report)."""
    from importlib.metadata import PackageNotFoundError, version

    shown = []
    for name in ("torch", "lightning", "dvc", "optuna", "matplotlib"):
        try:
            shown.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            continue
    return ", ".join(shown)


def params_line(results: Results, key: str) -> str | None:
    """A top-level knob of params.yaml as the report stage read it (``seed``, ``budget``)."""
    node: Any = results.params
    for part in key.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return None if node is None else f"{node} (params.yaml)"
