"""The headline metrics: the few numbers `dvc exp show` compares experiments by.

Every stage writes its own full record under ``reports/metrics/``; declared as DVC
metrics they made `dvc exp show` 1,232 columns wide, each prefixed by its file's path.
The report stage instead writes one small file, keyed by variant, that DVC declares as
the pipeline's only metrics: each trained variant's whole-split ``val/ppl`` (and
``val/bpb`` where the record has it), each Winograd variant's held-out accuracy, each
study's best ``val/ppl``, and the tally of claim verdicts. A trained value is its mean over
seeds, beside one ``n`` column (the seeds it averages); the spread and the per-seed
values are in ``reports/summary/`` (:mod:`attnlab.report.aggregates`). Tables and strings
stay out, and so does an alias row (params ``aliases``): its numbers are its variant's,
listed once under the variant's name.

A run the params list with no current record shows its records as measured
(:func:`as_measured`): an experiment that re-runs one variant under a changed knob makes
every other variant's records stale for its params, and a headline of current records
only lost them all, so that ``dvc metrics diff`` and ``dvc exp show --only-changed``
listed every variant the experiment never touched. A run with current records is never
averaged with stale ones; which records are current is the report's to say.
"""

import dataclasses
from typing import Any

from attnlab.report.inputs import ReportInputs, Results
from attnlab.verdicts.decisions import FAILS, HOLDS, INCONCLUSIVE, NOT_RUN, STALE, Verdict

EVAL_SUFFIX = "/eval"
VARIANT_KEYS = ("val/ppl", "val/bpb")
WINOGRAD_PREFIX = "winograd/"
WINOGRAD_KEY = "winograd/acc"
TALLY = {
    HOLDS: "holds",
    FAILS: "does_not_hold",
    INCONCLUSIVE: "inconclusive",
    STALE: "stale",
    NOT_RUN: "not_run",
}


def as_measured(inputs: ReportInputs) -> ReportInputs:
    """``inputs`` with no record judged stale, by its params or by its code."""
    return dataclasses.replace(inputs, configurations={}, code=None)


def _numbers(results: Results, source: str, keys: tuple[str, ...]) -> dict[str, float]:
    found = {key: results.summary(source, key) for key in keys}
    numbers: dict[str, float] = {
        key: summary.mean for key, summary in found.items() if summary is not None
    }
    if numbers:
        numbers["n"] = max(summary.n for summary in found.values() if summary is not None)
    return numbers


def headline(
    results: Results, verdicts: list[Verdict], measured: Results | None = None
) -> dict[str, Any]:
    """The headline record, nested so that DVC's columns read ``<variant>.val/ppl``.

    Args:
        results: Everything the pipeline measured, the stale records left out.
        verdicts: Every claim's verdict.
        measured: The same records, none left out as stale: the numbers of a run the
            params list (``results.expected``) that has no current record. None: none.
    """
    record: dict[str, Any] = {
        "claims": {
            name: sum(v.status == status for v in verdicts) for status, name in TALLY.items()
        }
    }
    for source in sorted({*results.metrics, *(measured.metrics if measured else ())}):
        row, numbers = _row(results, source)
        if not numbers and measured is not None and _run_of(source) in results.expected:
            row, numbers = _row(measured, source)
        if numbers:
            record[row] = numbers
    for study, sweep in sorted(results.sweeps.items()):
        best = sweep.best.get("val/ppl")
        if isinstance(best, int | float):
            record[f"sweep/{study}"] = {"best/val/ppl": best}
    return record


def _row(results: Results, source: str) -> tuple[str, dict[str, float]]:
    """The headline row of metrics ``source`` and its numbers (none: not a headline row)."""
    if source.endswith(EVAL_SUFFIX):
        return source.removesuffix(EVAL_SUFFIX), _numbers(results, source, VARIANT_KEYS)
    if source.startswith(WINOGRAD_PREFIX) and results.summary(source, WINOGRAD_KEY):
        return source, _numbers(results, source, (WINOGRAD_KEY,))
    return source, {}


def _run_of(source: str) -> str:
    """The variant (or Winograd variant) whose runs wrote metrics ``source``."""
    return source.removesuffix(EVAL_SUFFIX).removeprefix(WINOGRAD_PREFIX)
