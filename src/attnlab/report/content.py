"""What one section of the report holds, independent of HTML or Markdown.

A :class:`Section` is one experiment of docs/catalogue.md (or P0, or the sweeps): its
protocol lines, its tables, its figures and notes. The section builders fill them from
the measurements; :mod:`attnlab.report.render` turns them into a page and a Markdown file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from attnlab.report.inputs import Results
from attnlab.verdicts.number_format import fmt
from attnlab.verdicts.stats import Seed, Summary, paired_ratio

MISSING = "not run"
SPREAD_NOTE = (
    "Trained values: mean ± half-width of the 95 % t-interval over seeds (n); "
    "ratios: the geometric mean of the per-seed ratios [95 % interval] (n). "
    "Hover a cell for its per-seed values; reports/summary/ holds them all."
)


class Cell(str):
    """A table cell's text, with the per-seed values behind it (``detail``) when any.

    ``href``: where the text links to (a sweep trial's W&B run), empty for plain text.
    """

    detail: str = ""
    href: str = ""

    @classmethod
    def of(cls, text: str, detail: str = "", href: str = "") -> Cell:
        """A cell showing ``text`` whose per-seed values read ``detail``, linking to ``href``."""
        made = cls(text)
        made.detail = detail
        made.href = href
        return made


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


def _per_seed(values: Mapping[Seed, float], digits: str = "") -> str:
    return ", ".join(f"seed {s}: {cell(v, digits)}" for s, v in values.items() if s is not None)


def spread_cell(summary: Summary | None, digits: str = "") -> str:
    """A measurement over seeds: ``mean ± half-width (n)``, or ``not run``.

    One unseeded value prints as itself; one seed as ``value (n = 1)``: no interval.
    """
    if summary is None:
        return MISSING
    detail = _per_seed(summary.values, digits)
    if summary.half_width is None:
        suffix = "" if None in summary.values else " (n = 1)"
        return Cell.of(cell(summary.mean, digits) + suffix, detail)
    text = f"{cell(summary.mean, digits)} ± {fmt(summary.half_width)} ({summary.n})"
    return Cell.of(text, detail)


def ratio_cell(a: Mapping[Seed, float], b: Mapping[Seed, float]) -> str:
    """``a / b`` paired by seed: the geometric mean of the ratios and its 95 % interval."""
    ratio = paired_ratio(a, b)
    if ratio is None:
        return MISSING
    # Printed as the verdicts print the same ratio: a fixed three decimals turned the lower
    # end 0.9999 of an interval that straddles 1 into "1.000", which reads as excluding it.
    detail = ", ".join(f"seed {s}: {fmt(r)}" for s, r in ratio.ratios.items() if s is not None)
    if ratio.interval is None:
        suffix = "" if None in ratio.ratios else " (n = 1)"
        return Cell.of(f"{fmt(ratio.centre)}{suffix}", detail)
    low, high = ratio.interval
    return Cell.of(f"{fmt(ratio.centre)} [{fmt(low)}, {fmt(high)}] ({ratio.logs.n})", detail)


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
