"""The aggregates of every seeded measurement: mean, standard deviation, n and each seed.

For every metrics source a trained run wrote per seed (``ladder-mlp/eval``,
``winograd/leaky-average``...), every numeric key becomes ``{"mean", "std", "n",
"seeds": {seed: value}}`` (``std`` is ``None`` at n = 1). The report stage writes one
file per source under ``reports/summary/``, laid out like ``reports/metrics/`` without
the seed segment (and without the records' own ``seed`` key), so each experiment's rows
name a folder (docs/catalogue.md, How a claim
is decided). Unseeded sources (the probes, the corpus) are their own record already.
"""

from __future__ import annotations

from typing import Any

from attnlab.report.inputs import Results


def aggregates(results: Results) -> dict[str, dict[str, dict[str, Any]]]:
    """Per seeded source, per numeric key: mean, std, n and the per-seed values."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for source in sorted(results.metrics):
        if set(results.metrics[source]) == {None}:
            continue
        keys: dict[str, dict[str, Any]] = {}
        for key in results.record(source):
            summary = None if key == "seed" else results.summary(source, key)
            if summary is None:
                continue
            keys[key] = {
                "mean": summary.mean,
                "std": summary.std,
                "n": summary.n,
                "seeds": {str(seed): value for seed, value in summary.values.items()},
            }
        if keys:
            out[source] = keys
    return out
