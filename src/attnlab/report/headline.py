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
"""

from typing import Any

from attnlab.report.inputs import Results
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


def _numbers(results: Results, source: str, keys: tuple[str, ...]) -> dict[str, float]:
    found = {key: results.summary(source, key) for key in keys}
    numbers: dict[str, float] = {
        key: summary.mean for key, summary in found.items() if summary is not None
    }
    if numbers:
        numbers["n"] = max(summary.n for summary in found.values() if summary is not None)
    return numbers


def headline(results: Results, verdicts: list[Verdict]) -> dict[str, Any]:
    """The headline record, nested so that DVC's columns read ``<variant>.val/ppl``.

    Args:
        results: Everything the pipeline measured.
        verdicts: Every claim's verdict.
    """
    record: dict[str, Any] = {
        "claims": {
            name: sum(v.status == status for v in verdicts) for status, name in TALLY.items()
        }
    }
    for source in sorted(results.metrics):
        if source.endswith(EVAL_SUFFIX):
            numbers = _numbers(results, source, VARIANT_KEYS)
            variant = source.removesuffix(EVAL_SUFFIX)
        elif source.startswith(WINOGRAD_PREFIX) and results.summary(source, WINOGRAD_KEY):
            numbers = _numbers(results, source, (WINOGRAD_KEY,))
            variant = source
        else:
            continue
        if numbers:
            record[variant] = numbers
    for study, sweep in sorted(results.sweeps.items()):
        best = sweep.best.get("val/ppl")
        if isinstance(best, int | float):
            record[f"sweep/{study}"] = {"best/val/ppl": best}
    return record
