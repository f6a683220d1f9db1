"""Everything the pipeline measured, read back from disk for the report (all of docs/catalogue.md).

The report renders whatever exists: every metrics JSON under the metrics folder (keyed by
its path, ``ladder-average/eval``, ``probes/e05``, ``cost``), every curve CSV, every table
TSV, every figure another stage drew, and every sweep. Nothing here knows which experiment
a file belongs to; :mod:`attnlab.report.sections` does. A file that cannot be read becomes
a line in :attr:`Results.problems` instead of an exception: a half-finished run still gets
its report.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Point = tuple[float, float]
FIGURE_SUFFIXES = (".png", ".svg")


@dataclass(frozen=True)
class ReportInputs:
    """Where the measurements live (the pipeline script passes the project's folders).

    Attributes:
        metrics: JSON metrics, one file per stage output (``<variant>/eval.json``...).
        curves: per-variant CSV curves (``<variant>/train_loss.csv``: step, value).
        tables: TSV tables.
        figures: figures the measuring stages drew themselves (PNG or SVG).
        sweeps: one folder per Optuna study (``best.json``, ``trials.csv``, figures).
        params: the report's own params: ``seed`` and ``budget.scale`` (the protocol
            lines a metrics file does not record itself).
    """

    metrics: Path
    curves: Path
    tables: Path
    figures: Path
    sweeps: Path
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Sweep:
    """One Optuna study's outputs: its best trial, its trials, the figures it drew."""

    best: dict[str, Any]
    trials: list[dict[str, str]]
    figures: tuple[Path, ...]


@dataclass
class Results:
    """The measurements found on disk; every lookup answers ``None`` for what is absent."""

    metrics: dict[str, dict[str, Any]] = field(default_factory=dict)
    curves: dict[str, dict[str, list[Point]]] = field(default_factory=dict)
    tables: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    documents: dict[str, dict[str, Any]] = field(default_factory=dict)
    figures: dict[str, Path] = field(default_factory=dict)
    sweeps: dict[str, Sweep] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def value(self, source: str, key: str) -> float | None:
        """A finite number from metrics file ``source``, or ``None`` when absent.

        ``key`` ending in ``*`` is the mean over every numeric key with that prefix
        (``trained/scores/std/*``: the mean over blocks and heads).
        """
        record = self.metrics.get(source)
        if record is None:
            return None
        if key.endswith("*"):
            found = [_number(v) for k, v in record.items() if k.startswith(key[:-1])]
            numbers = [v for v in found if v is not None]
            return sum(numbers) / len(numbers) if numbers else None
        return _number(record.get(key))

    def raw(self, source: str, key: str) -> Any:
        """The value of ``key`` in metrics file ``source`` as stored (any JSON type)."""
        return self.metrics.get(source, {}).get(key)

    def curve(self, owner: str, column: str) -> list[Point] | None:
        """The curve of ``column`` in ``<owner>.csv`` or in any CSV under ``<owner>/``.

        ``column`` is the CSV's value column; a ``loss`` column is named ``train/loss``.
        """
        for name in sorted(self.curves):
            if (name == owner or name.startswith(f"{owner}/")) and column in self.curves[name]:
                return self.curves[name][column]
        return None

    def table(self, name: str) -> list[dict[str, str]]:
        """The rows of TSV table ``name`` (its path without ``.tsv``); empty when absent."""
        return self.tables.get(name, [])

    def figures_of(self, prefix: str) -> list[Path]:
        """The stage-drawn figures whose name starts with ``prefix`` (``e06_``), sorted."""
        return [self.figures[name] for name in sorted(self.figures) if name.startswith(prefix)]


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def load_results(inputs: ReportInputs) -> Results:
    """Read every measurement under ``inputs``; missing folders are simply empty."""
    results = Results(params=dict(inputs.params))
    for path in _files(inputs.metrics, ".json"):
        record = _read(path, results.problems, _json_object)
        if record is not None:
            results.metrics[_name(path, inputs.metrics)] = record
    for path in _files(inputs.curves, ".csv"):
        curve = _read(path, results.problems, _read_curve)
        if curve is not None:
            results.curves[_name(path, inputs.curves)] = {curve[0]: curve[1]}
    for path in _files(inputs.tables, ".tsv"):
        rows = _read(path, results.problems, _read_tsv)
        if rows is not None:
            results.tables[_name(path, inputs.tables)] = rows
    for path in _files(inputs.tables, ".json"):  # records too nested for a metrics file
        record = _read(path, results.problems, _json_object)
        if record is not None:
            results.documents[_name(path, inputs.tables)] = record
    for suffix in FIGURE_SUFFIXES:
        for path in _files(inputs.figures, suffix):
            results.figures[path.relative_to(inputs.figures).as_posix()] = path
    if inputs.sweeps.is_dir():
        for folder in sorted(p for p in inputs.sweeps.iterdir() if p.is_dir()):
            results.sweeps[folder.name] = _read_sweep(folder, results.problems)
    return results


def _files(folder: Path, suffix: str) -> list[Path]:
    return sorted(folder.rglob(f"*{suffix}")) if folder.is_dir() else []


def _name(path: Path, root: Path) -> str:
    return path.relative_to(root).with_suffix("").as_posix()


def _read(path: Path, problems: list[str], reader: Any) -> Any:
    try:
        return reader(path)
    except (OSError, ValueError, KeyError, IndexError) as err:
        problems.append(f"{path}: unreadable ({err})")
        return None


def _json_object(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError("expected a JSON object")
    return data


def _read_curve(path: Path) -> tuple[str, list[Point]]:
    """A two-column CSV (step, value); the curve is named by its value column."""
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        if len(header) < 2:
            raise ValueError(f"expected a step column and a value column, got {header}")
        points = [(float(row[0]), float(row[1])) for row in reader if row]
    name = header[1]
    return ("train/loss" if name == "loss" else name), points


def _read_tsv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def _read_sweep(folder: Path, problems: list[str]) -> Sweep:
    best_path, trials_path = folder / "best.json", folder / "trials.csv"
    best = _read(best_path, problems, _json_object) if best_path.is_file() else None
    trials = _read(trials_path, problems, _read_csv) if trials_path.is_file() else None
    figures = tuple(p for s in FIGURE_SUFFIXES for p in sorted(folder.rglob(f"*{s}")))
    return Sweep(best=best or {}, trials=trials or [], figures=figures)


def _read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))
