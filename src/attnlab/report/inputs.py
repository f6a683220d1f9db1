"""Everything the pipeline measured, read back from disk for the report (all of docs/catalogue.md).

The report renders whatever exists: every metrics JSON under the metrics folder (keyed by
its path, ``ladder-average/eval``, ``probes/e05``, ``cost``), every curve CSV, every table
TSV, every figure another stage drew, and every sweep. A trained run writes one file per
seed: a ``seed-<s>`` segment of the path, a folder (``ladder-mlp/seed-1/eval.json``) or the
file's own name (``winograd/leaky-average/seed-1.json``), makes it seed ``s`` of the source
the rest of the path names (``ladder-mlp/eval``, ``winograd/leaky-average``). Every
lookup answers per seed, ``{seed: value}``; a file without a seed segment is one value
recorded once (seed ``None``). A row that is an alias (params ``aliases``: the same run
as a variant) has no files of its own: every lookup of ``depth-1/eval`` reads the variant's
``ladder-layernorm/eval``. Nothing here knows which experiment a file belongs to;
:mod:`attnlab.report.sections` does. A file that cannot be read becomes a line in
:attr:`Results.problems` instead of an exception: a half-finished run still gets its report.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attnlab.errors import AttnlabError
from attnlab.paths import BEST_TRIAL, TRIALS, read_metrics
from attnlab.report.stale import (
    CodeDigests,
    Configurations,
    awaited_runs,
    drop_other_code_document,
    drop_stale_runs,
)
from attnlab.verdicts.decisions import Awaited
from attnlab.verdicts.stats import Seed, Summary, summarise

Point = tuple[float, float]
FIGURE_SUFFIXES = (".png", ".svg")
SEED_SEGMENT = re.compile(r"seed-(\d+)")
Runs = dict[Seed, dict[str, Any]]  # one record per seed (``None``: recorded once)


@dataclass(frozen=True)
class ReportInputs:
    """Where the measurements live (:mod:`attnlab.stages.report` passes :mod:`attnlab.paths`'s).

    Attributes:
        metrics: JSON metrics, one file per stage output (``<variant>/eval.json``...).
        curves: per-variant CSV curves (``<variant>/train_loss.csv``: step, value).
        tables: TSV tables.
        figures: figures the measuring stages drew themselves (PNG or SVG).
        sweeps: one folder per Optuna study (``best.json``, ``trials.csv``, figures).
        params: the report's own params: ``seed`` and ``budget.scale`` (the protocol
            lines a metrics file does not record itself), ``wandb`` (``entity``,
            ``project``: the trials' links), ``sweeps`` (per study its ``variant``,
            ``choice``, that variant's value of every searched axis, and ``references``,
            the study's reference trials) and ``variants`` (per variant its resolved
            ``model`` and ``train``: the protocol a table quotes).
        aliases: params ``aliases``: each alias row and the variant whose runs it reads.
        variants: params ``variants``' names: the rows trained once per seed, so a file of
            theirs without a seed is a stale record, never a value for every seed.
        configurations: per variant, per seed of params ``seeds``, the configuration the
            params give its run (:mod:`attnlab.report.stale`): a run whose records state
            another is left out. Empty: no run is judged by its params.
        code: per stage of :data:`attnlab.result_code.RECORDED`, the digests of its code
            in the checkout: a record that states other code is left out, and the claims
            that read it are stale. ``None``: no record is judged by its code.
        seeds: per run the params expect (a variant of ``variants`` or of the Winograd
            task), its seeds: a claim reading a run with fewer current seeds is stale.
    """

    metrics: Path
    curves: Path
    tables: Path
    figures: Path
    sweeps: Path
    params: dict[str, Any] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    variants: tuple[str, ...] = ()
    configurations: Configurations = field(default_factory=dict)
    code: CodeDigests | None = None
    seeds: dict[str, tuple[int, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Sweep:
    """One Optuna study's outputs: its best trial, its trials, the figures it drew."""

    best: dict[str, Any]
    trials: list[dict[str, str]]
    figures: tuple[Path, ...]


@dataclass
class Results:
    """The measurements found on disk; every lookup answers ``None`` for what is absent.

    ``metrics`` and ``curves`` hold one entry per seed of each source
    (``metrics["ladder-mlp/eval"][1]`` is seed 1's record), as found on disk; the lookups
    below read an alias row's source (``aliases``: row -> variant) from its variant's.
    ``stale`` names the records left out because other params or other code made them,
    ``left_out`` holds their seeds per run, and ``expected`` the seeds of each run the
    params expect (:meth:`awaiting` compares the two).
    """

    metrics: dict[str, Runs] = field(default_factory=dict)
    curves: dict[str, dict[Seed, dict[str, list[Point]]]] = field(default_factory=dict)
    tables: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    documents: dict[str, dict[str, Any]] = field(default_factory=dict)
    figures: dict[str, Path] = field(default_factory=dict)
    sweeps: dict[str, Sweep] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    aliases: dict[str, str] = field(default_factory=dict)
    stale: list[str] = field(default_factory=list)
    left_out: dict[str, set[Seed]] = field(default_factory=dict)
    expected: dict[str, tuple[int, ...]] = field(default_factory=dict)

    def awaiting(self, sources: Iterable[tuple[str, bool]]) -> Awaited:
        """The runs ``sources`` (each: source, exact) read that are not current.

        As :func:`~attnlab.report.stale.awaited_runs` counts them, from the records read,
        those left out and the seeds the params expect.
        """
        resolved = [(self.resolve(source), exact) for source, exact in sources]
        read = [(source, exact, set(self.metrics.get(source, {}))) for source, exact in resolved]
        return awaited_runs(read, self.left_out, self.expected)

    def resolve(self, source: str) -> str:
        """``source`` with an alias row replaced by its variant (``depth-1/eval`` -> its runs').

        Any other source is itself.
        """
        row, slash, rest = source.partition("/")
        return self.aliases.get(row, row) + slash + rest

    def runs(self, source: str) -> Runs:
        """The per-seed records of ``source`` (an alias row's are its variant's); {} if none."""
        return self.metrics.get(self.resolve(source), {})

    def record(self, source: str) -> dict[str, Any]:
        """Every key of ``source`` with its first seed's value (strings, keys, nested records).

        Empty when ``source`` was not measured.
        """
        runs = self.runs(source)
        merged: dict[str, Any] = {}
        for seed in _seed_order(runs):
            for key, value in runs[seed].items():
                merged.setdefault(key, value)
        return merged

    def per_seed(self, source: str, key: str) -> dict[Seed, float]:
        """The finite number at ``key`` of each seed of ``source`` (empty when none).

        ``key`` ending in ``*`` is, per seed, the mean over every numeric key with that
        prefix (``trained/scores/std/*``: the mean over blocks and heads).
        """
        runs = self.runs(source)
        found = {seed: _lookup(runs[seed], key) for seed in _seed_order(runs)}
        return {seed: value for seed, value in found.items() if value is not None}

    def summary(self, source: str, key: str) -> Summary | None:
        """Mean, spread and n of ``key`` over the seeds of ``source``; ``None`` when absent."""
        values = self.per_seed(source, key)
        return summarise(values) if values else None

    def value(self, source: str, key: str) -> float | None:
        """The mean over seeds of ``key`` in ``source`` (the value itself when unseeded)."""
        found = self.summary(source, key)
        return None if found is None else found.mean

    def records(self) -> list[dict[str, Any]]:
        """Every record read: each metrics file of every seed, then the tables' JSON records."""
        runs = [record for found in self.metrics.values() for record in found.values()]
        return runs + list(self.documents.values())

    def curve(self, owner: str, column: str) -> dict[Seed, list[Point]]:
        """Per seed, the curve of ``column`` in ``<owner>.csv`` or any CSV under ``<owner>/``.

        ``column`` is the CSV's value column; a ``loss`` column is named ``train/loss``.
        Empty when no such curve was drawn.
        """
        owner = self.resolve(owner)
        for name in sorted(self.curves):
            if name == owner or name.startswith(f"{owner}/"):
                runs = self.curves[name]
                found = {
                    seed: runs[seed][column] for seed in _seed_order(runs) if column in runs[seed]
                }
                if found:
                    return found
        return {}

    def table(self, name: str) -> list[dict[str, str]]:
        """The rows of TSV table ``name`` (its path without ``.tsv``); empty when absent."""
        return self.tables.get(name, [])


def _seed_order(runs: dict[Seed, Any]) -> list[Seed]:
    return sorted(runs, key=lambda seed: (seed is not None, seed))


def _lookup(record: dict[str, Any], key: str) -> float | None:
    if key.endswith("*"):
        found = [_number(v) for k, v in record.items() if k.startswith(key[:-1])]
        numbers = [v for v in found if v is not None]
        return sum(numbers) / len(numbers) if numbers else None
    return _number(record.get(key))


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def load_results(inputs: ReportInputs) -> Results:
    """Read every measurement under ``inputs``; missing folders are simply empty."""
    results = Results(params=dict(inputs.params), aliases=dict(inputs.aliases))
    for path in _files(inputs.metrics, ".json"):
        record = _read(path, results.problems, read_metrics)
        if record is not None:
            source, seed = split_seed(_name(path, inputs.metrics))
            results.metrics.setdefault(source, {})[seed] = record
    for path in _files(inputs.curves, ".csv"):
        curve = _read(path, results.problems, _read_curve)
        if curve is not None:
            owner, seed = split_seed(_name(path, inputs.curves))
            results.curves.setdefault(owner, {})[seed] = {curve[0]: curve[1]}
    for kind, found in (("metrics", results.metrics), ("curves", results.curves)):
        _drop_unseeded_beside_seeded(found, kind, results.problems)
        _drop_unseeded_runs(found, kind, set(inputs.variants), results.problems)
    for kind, found in (("metrics", results.metrics), ("curves", results.curves)):
        _drop_alias_files(found, kind, results.aliases, results.problems)
    stale = drop_stale_runs(
        results.metrics, results.curves, inputs.configurations, inputs.code, inputs.variants
    )
    for path in _files(inputs.tables, ".tsv"):
        rows = _read(path, results.problems, _read_tsv)
        if rows is not None:
            results.tables[_name(path, inputs.tables)] = rows
    for path in _files(inputs.tables, ".json"):  # records too nested for a metrics file
        record = _read(path, results.problems, read_metrics)
        name = _name(path, inputs.tables)
        if record is not None and not drop_other_code_document(name, record, inputs.code, stale):
            results.documents[name] = record
    for suffix in FIGURE_SUFFIXES:
        for path in _files(inputs.figures, suffix):
            results.figures[path.relative_to(inputs.figures).as_posix()] = path
    if inputs.sweeps.is_dir():
        for folder in sorted(p for p in inputs.sweeps.iterdir() if p.is_dir()):
            sweep = _read_sweep(folder, results.problems)
            if not drop_other_code_document(f"sweep {folder.name}", sweep.best, inputs.code, stale):
                results.sweeps[folder.name] = sweep
    results.stale, results.left_out = stale.lines, stale.seeds
    results.expected = dict(inputs.seeds)
    return results


def _drop_unseeded_beside_seeded(found: dict[str, dict], kind: str, problems: list[str]) -> None:
    """A source written both per seed and once without a seed keeps only its seeds.

    The file without a seed is a run of the layout before seeds (a stale record); counted
    as one more seed it would pair with nothing and skew every mean.
    """
    for source, runs in found.items():
        if None in runs and len(runs) > 1:
            del runs[None]
            problems.append(
                f"{kind} {source}: a file without a seed beside per-seed files, "
                "ignored (a stale record of the layout before seeds?)"
            )


def _drop_unseeded_runs(
    found: dict[str, dict], kind: str, variants: set[str], problems: list[str]
) -> None:
    """A trained variant's source with only a file without a seed is dropped.

    Every training run writes per seed, so such a file is a run of the layout before
    seeds. Kept, it would read as recorded once, an exact computation, and pair with
    every seed of the row it is compared with: one stale run standing in for runs never
    made.
    """
    for source in [s for s, runs in found.items() if s.partition("/")[0] in variants]:
        if set(found[source]) == {None}:
            del found[source]
            problems.append(
                f"{kind} {source}: a trained run's file without a seed, ignored (every "
                "run writes per seed: a stale record of the layout before seeds?)"
            )


def _drop_alias_files(
    found: dict[str, dict], kind: str, aliases: dict[str, str], problems: list[str]
) -> None:
    """An alias row's own files are dropped: its rows read its variant's runs.

    They are a stale record of before the alias (each run is trained once); read beside
    the variant's they would count the same configuration twice, or disagree with it.
    """
    for source in [s for s in found if s.partition("/")[0] in aliases]:
        del found[source]
        row = source.partition("/")[0]
        problems.append(
            f"{kind} {source}: ignored, {row} is an alias of {aliases[row]} and reads its "
            "runs (a stale record of before the alias?)"
        )


def _files(folder: Path, suffix: str) -> list[Path]:
    return sorted(folder.rglob(f"*{suffix}")) if folder.is_dir() else []


def _name(path: Path, root: Path) -> str:
    return path.relative_to(root).with_suffix("").as_posix()


def split_seed(name: str) -> tuple[str, Seed]:
    """A file's name without its ``seed-<s>`` segment, and ``s`` (``None`` when it has none).

    ``ladder-mlp/seed-2/eval`` is seed 2 of ``ladder-mlp/eval``; ``winograd/leaky-average/
    seed-2`` is seed 2 of ``winograd/leaky-average``. A name with two seed segments keeps
    the second as a plain segment (no layout writes one).
    """
    parts = name.split("/")
    for i, part in enumerate(parts):
        match = SEED_SEGMENT.fullmatch(part)
        if match and len(parts) > 1:
            return "/".join(parts[:i] + parts[i + 1 :]), int(match.group(1))
    return name, None


def _read(path: Path, problems: list[str], reader: Any) -> Any:
    try:
        return reader(path)
    except AttnlabError as err:  # read_metrics names the file itself
        problems.append(str(err))
    except (OSError, ValueError, KeyError, IndexError) as err:
        problems.append(f"{path}: unreadable ({err})")
    return None


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
    best_path, trials_path = folder / BEST_TRIAL, folder / TRIALS
    best = _read(best_path, problems, read_metrics) if best_path.is_file() else None
    trials = _read(trials_path, problems, _read_csv) if trials_path.is_file() else None
    figures = tuple(p for s in FIGURE_SUFFIXES for p in sorted(folder.rglob(f"*{s}")))
    return Sweep(best=best or {}, trials=trials or [], figures=figures)


def _read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))
