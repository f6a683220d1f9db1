"""The headline metrics: the few numbers `dvc exp show` compares experiments by.

Every stage writes its own full record under ``reports/metrics/``; declared as DVC
metrics they made `dvc exp show` 1,232 columns wide, each prefixed by its file's path.
The report stage instead writes one small file, keyed by variant, that DVC declares as
the pipeline's only metrics: each trained variant's whole-split ``val/ppl`` (and
``val/bpb`` where the record has it), each Winograd variant's held-out accuracy, each
study's best ``val/ppl``, and the tally of claim verdicts. Tables and strings stay out.
"""

from typing import Any

from attnlab.report.claims import FAILS, HOLDS, NOT_RUN, Verdict
from attnlab.report.results import Results

EVAL_SUFFIX = "/eval"
VARIANT_KEYS = ("val/ppl", "val/bpb")
WINOGRAD_PREFIX = "winograd/"
WINOGRAD_KEY = "winograd/acc"
TALLY = {HOLDS: "holds", FAILS: "does_not_hold", NOT_RUN: "not_run"}


def _numbers(results: Results, source: str, keys: tuple[str, ...]) -> dict[str, float]:
    found = {key: results.value(source, key) for key in keys}
    return {key: value for key, value in found.items() if value is not None}


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
        elif source.startswith(WINOGRAD_PREFIX) and results.value(source, WINOGRAD_KEY) is not None:
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
