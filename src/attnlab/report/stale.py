"""Stale runs: a trained run whose records were made under other params is left out, by name.

Every trained row of docs/catalogue.md averages its seeds' runs, so one run of another
configuration (a 15-step run of ``attnlab repro -S budget.scale=0.005`` beside 3000-step
ones) would move the mean and every verdict that reads it, silently. A run is one variant
under one seed: its ``train.json`` and ``eval.json`` must state the configuration the
current params give it (:mod:`attnlab.config.fingerprint`), and its seed must be one of
params ``seeds``. A run that does not is dropped whole (its metrics and its curves), and
the report names it with the reason, so its rows read the matching runs only. A run
record (``<name>/train.json``, ``<name>/eval.json``) of a variant the params no longer list
cannot be checked against anything: it is left out the same way, named.
"""

from __future__ import annotations

from collections.abc import Mapping

from attnlab.config.fingerprint import EVAL, TRAIN, RunConfiguration
from attnlab.verdicts.stats import Seed

# Per variant, per seed of params ``seeds``: the configuration the params give its run.
Configurations = Mapping[str, Mapping[int, RunConfiguration]]


def _of(variant: str, found: Mapping[str, dict[Seed, object]]) -> list[str]:
    """The sources of ``variant``'s runs in ``found`` (``ladder-mlp/eval``...)."""
    return [source for source in found if source.partition("/")[0] == variant]


def _why_stale(
    metrics: Mapping[str, dict[Seed, dict]], variant: str, seed: int, expected: RunConfiguration
) -> str | None:
    for kind in (TRAIN, EVAL):
        record = metrics.get(f"{variant}/{kind}", {}).get(seed)
        reason = None if record is None else expected.differs(kind, record)
        if reason:
            return reason
    return None


def drop_stale_runs(
    metrics: dict[str, dict[Seed, dict]],
    curves: dict[str, dict[Seed, dict]],
    configurations: Configurations,
) -> list[str]:
    """Remove every run of ``configurations``' variants that the params do not give.

    Args:
        metrics: The metrics found, by source and seed (changed in place).
        curves: The curves found, by owner and seed (changed in place).
        configurations: Per variant, per seed, the configuration its run must state.
            Empty: nothing is judged (a fabricated record). Otherwise a run record of a
            variant not in it is left out, as no params describe it.

    Returns:
        One line per run left out: ``ladder-mlp seed 1337: train.json steps 15, params
        give 3000``.
    """
    stale = _drop_unknown_variants(metrics, curves, configurations) if configurations else []
    for variant, expected in configurations.items():
        seeds = {seed for found in (metrics, curves) for seed in _seeds(variant, found)}
        for seed in sorted(seeds):
            if seed in expected:
                reason = _why_stale(metrics, variant, seed, expected[seed])
            else:
                reason = "its seed is not one of params seeds"
            if reason is not None:
                stale.append(f"{variant} seed {seed}: {reason}")
                _drop(metrics, variant, seed)
                _drop(curves, variant, seed)
    return stale


def _drop_unknown_variants(
    metrics: dict[str, dict[Seed, dict]],
    curves: dict[str, dict[Seed, dict]],
    configurations: Configurations,
) -> list[str]:
    """Remove every run record of a variant not in ``configurations``, with its curves.

    A run record's source is ``<variant>/train`` or ``<variant>/eval``; a source nested
    deeper (``sweep-check/dk/train``, ``winograd/train/...``) is another stage's.
    """
    unknown = {
        variant
        for source in metrics
        for variant, _, kind in [source.partition("/")]
        if kind in (TRAIN, EVAL) and variant not in configurations
    }
    stale = []
    for variant in sorted(unknown):
        seeds = sorted(_seeds(variant, metrics) | _seeds(variant, curves))
        runs = [f"{variant} seed {seed}" for seed in seeds] or [variant]  # or unseeded files
        stale += [f"{run}: no variant {variant} in params variants" for run in runs]
        _drop_all(metrics, variant)
        _drop_all(curves, variant)
    return stale


def _drop_all(found: dict[str, dict[Seed, dict]], variant: str) -> None:
    for source in _of(variant, found):
        del found[source]


def _seeds(variant: str, found: Mapping[str, dict[Seed, object]]) -> set[int]:
    return {seed for source in _of(variant, found) for seed in found[source] if seed is not None}


def _drop(found: dict[str, dict[Seed, dict]], variant: str, seed: int) -> None:
    """Remove ``seed``'s run of ``variant`` from ``found``, and each source left empty."""
    for source in _of(variant, found):
        found[source].pop(seed, None)
        if not found[source]:
            del found[source]
