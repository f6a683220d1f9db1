"""Stale runs: a record made under other params, or by other code, is left out, by name.

Every trained row of docs/catalogue.md averages its seeds' runs, so one run of another
configuration (a 15-step run of ``attnlab repro -S budget.scale=0.005`` beside 3000-step
ones) or of older code (trained before an edit of ``training/``) would move the mean and
every verdict that reads it, silently. A run is one variant under one seed: its
``train.json`` and ``eval.json`` must state the configuration the current params give it
(:mod:`attnlab.config.fingerprint`) and the code the checkout holds
(:func:`attnlab.result_code.changed_parts`), and its seed must be one of its seeds in the
params. A run that does not is dropped whole (its metrics and its curves). Every other
record (a Winograd run's, a probe's, the cost table's) must state the code too. The report
names each record left out with the reason, and :attr:`StaleRecords.seeds` tells the
verdicts which runs a claim is still awaiting. A run record (``<name>/train.json``,
``<name>/eval.json``) of a variant the params no longer list cannot be checked against
anything: it is left out the same way, named.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from attnlab.config.fingerprint import EVAL, TRAIN, RunConfiguration
from attnlab.result_code import changed_parts
from attnlab.verdicts.decisions import Awaited, variant_of
from attnlab.verdicts.stats import Seed

# Per variant, per seed of its params seeds: the configuration the params give its run.
Configurations = Mapping[str, Mapping[int, RunConfiguration]]
# Per stage of attnlab.result_code.RECORDED, the digests of its code in the checkout.
CodeDigests = Mapping[str, Mapping[str, str]]
WINOGRAD_TRAINING = "winograd/train/"  # a Winograd run's training record, beside its score's


def run_of(source: str) -> str:
    """The run a record of ``source`` belongs to (its variant, or the record itself).

    A variant's ``train`` and ``eval`` records are one run; so are a Winograd variant's
    training record (``winograd/train/<variant>``) and its score (``winograd/<variant>``).
    """
    return variant_of(source.replace(WINOGRAD_TRAINING, "winograd/", 1))


@dataclass
class StaleRecords:
    """The records left out: one line each, and per run the seeds it lost.

    Attributes:
        lines: ``ladder-mlp seed 1337: train.json steps 15, params give 3000``.
        seeds: Per run (:func:`run_of`), the seeds left out (``None``: a record made once).
    """

    lines: list[str] = field(default_factory=list)
    seeds: dict[str, set[Seed]] = field(default_factory=dict)

    def add(self, run: str, seed: Seed, line: str) -> None:
        """Note ``seed`` of ``run`` as left out, for the reason ``line`` gives."""
        self.lines.append(line)
        self.seeds.setdefault(run, set()).add(seed)


def awaited_runs(
    read: Iterable[tuple[str, bool, set[Seed]]],
    left_out: Mapping[str, set[Seed]],
    expected: Mapping[str, tuple[int, ...]],
) -> Awaited:
    """The runs a claim reads that are not current, and how many it reads in all.

    Args:
        read: Each measurement's source (an alias resolved), whether it is exact (made
            once), and the seeds of it that were read.
        left_out: Per run, the seeds left out as stale (:attr:`StaleRecords.seeds`).
        expected: Per run the params expect, its seeds.

    A run is one seed of one variant (:func:`run_of`), or a record made once. A seeded
    source's run is expected under its params seeds (or, for a run the params do not
    list, under the seeds found or left out) and is current when a record of it was read
    for that seed. An exact source's record is awaited only when it was left out.
    """
    runs: dict[str, set[Seed]] = {}
    current: dict[str, set[Seed]] = {}
    for source, exact, seeds in read:
        run = run_of(source)
        left = left_out.get(run, set())
        if exact:
            found, wanted = ({None} - left), {None}
        else:
            found, wanted = seeds, set(expected.get(run, ())) or seeds | left
        runs.setdefault(run, set()).update(wanted)
        current.setdefault(run, set()).update(found)
    pairs = [
        (run, seed)
        for run, seeds in runs.items()
        for seed in sorted(seeds - current[run], key=lambda s: (s is not None, s))
    ]
    return Awaited(
        [run if seed is None else f"{run} seed {seed}" for run, seed in pairs],
        sum(len(seeds) for seeds in runs.values()),
        sum(seed in left_out.get(run, ()) for run, seed in pairs),
    )


def _of(variant: str, found: Mapping[str, dict[Seed, object]]) -> list[str]:
    """The sources of ``variant``'s runs in ``found`` (``ladder-mlp/eval``...)."""
    return [source for source in found if source.partition("/")[0] == variant]


def _why_stale(
    metrics: Mapping[str, dict[Seed, dict]],
    variant: str,
    seed: int,
    expected: RunConfiguration,
    code: CodeDigests | None,
) -> str | None:
    for kind in (TRAIN, EVAL):
        record = metrics.get(f"{variant}/{kind}", {}).get(seed)
        reason = None if record is None else expected.differs(kind, record)
        if reason is None and record is not None and code is not None:
            reason = _other_code(kind, record, code)
        if reason:
            return reason
    return None


def _other_code(kind: str, record: Mapping, code: CodeDigests) -> str | None:
    reason = changed_parts(record, code)
    return None if reason is None else f"{kind}.json {reason}"


def drop_stale_runs(
    metrics: dict[str, dict[Seed, dict]],
    curves: dict[str, dict[Seed, dict]],
    configurations: Configurations,
    code: CodeDigests | None = None,
    variants: Iterable[str] = (),
) -> StaleRecords:
    """Remove every record that the params or the code in the checkout would not make.

    Args:
        metrics: The metrics found, by source and seed (changed in place).
        curves: The curves found, by owner and seed (changed in place).
        configurations: Per variant, per seed, the configuration its run must state; a
            run record of a variant not in it is left out, as no params describe it.
            Empty: no run is judged by its params (a fabricated record).
        code: Per recording stage, its code's digests now; ``None``: code is not judged.
        variants: The trained variants: a record of other code drops its whole run.

    Returns:
        The records left out, with their reasons.
    """
    stale = StaleRecords()
    if configurations:
        _drop_unknown_variants(metrics, curves, configurations, stale)
    for variant, expected in configurations.items():
        seeds = {seed for found in (metrics, curves) for seed in _seeds(variant, found)}
        for seed in sorted(seeds):
            if seed in expected:
                reason = _why_stale(metrics, variant, seed, expected[seed], code)
            else:
                reason = "its seed is not one of params seeds"
            if reason is not None:
                stale.add(variant, seed, f"{variant} seed {seed}: {reason}")
                _drop(metrics, variant, seed)
                _drop(curves, variant, seed)
    if code is not None:
        _drop_other_code(metrics, curves, set(configurations), set(variants), code, stale)
    return stale


def _drop_other_code(
    metrics: dict[str, dict[Seed, dict]],
    curves: dict[str, dict[Seed, dict]],
    judged: set[str],
    variants: set[str],
    code: CodeDigests,
    stale: StaleRecords,
) -> None:
    """Remove every other record (not a judged variant's run) that other code wrote.

    A trained variant's record takes its whole run along, as a run of other params does.
    """
    for source in [s for s in metrics if s.partition("/")[0] not in judged]:
        owner, _, kind = source.partition("/")
        for seed in sorted(metrics.get(source, {}), key=lambda s: (s is not None, s)):
            reason = changed_parts(metrics[source][seed], code)
            if reason is None:
                continue
            if owner in variants and seed is not None:
                stale.add(owner, seed, f"{owner} seed {seed}: {kind}.json {reason}")
                _drop(metrics, owner, seed)
                _drop(curves, owner, seed)
                continue
            shown = source if seed is None else f"{source} seed {seed}"
            stale.add(run_of(source), seed, f"{shown}: {reason}")
            del metrics[source][seed]
            if source.startswith(WINOGRAD_TRAINING):  # its curves are that training's
                _drop(curves, "winograd/" + source.removeprefix(WINOGRAD_TRAINING), seed)
        if source in metrics and not metrics[source]:
            del metrics[source]


def drop_other_code_document(
    name: str, record: Mapping, code: CodeDigests | None, stale: StaleRecords
) -> bool:
    """Whether a record read once (a table's JSON, a study's best trial) is left out.

    Args:
        name: What the report calls it (``winograd/maps``, ``sweep dk``).
        record: The record.
        code: Per recording stage, its code's digests now; ``None``: not judged.
        stale: Where a record left out is noted.
    """
    reason = None if code is None else changed_parts(record, code)
    if reason is not None:
        # The maps name the Winograd model they were drawn from; its claims read them.
        made_of = f"winograd/{record['variant']}" if "variant" in record else name
        stale.add(run_of(made_of), None, f"{name}: {reason}")
    return reason is not None


def _drop_unknown_variants(
    metrics: dict[str, dict[Seed, dict]],
    curves: dict[str, dict[Seed, dict]],
    configurations: Configurations,
    stale: StaleRecords,
) -> None:
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
    for variant in sorted(unknown):
        seeds: list[Seed] = sorted(_seeds(variant, metrics) | _seeds(variant, curves))
        for seed in seeds or [None]:  # or unseeded files
            run = variant if seed is None else f"{variant} seed {seed}"
            stale.add(variant, seed, f"{run}: no variant {variant} in params variants")
        _drop_all(metrics, variant)
        _drop_all(curves, variant)


def _drop_all(found: dict[str, dict[Seed, dict]], variant: str) -> None:
    for source in _of(variant, found):
        del found[source]


def _seeds(variant: str, found: Mapping[str, dict[Seed, object]]) -> set[int]:
    return {seed for source in _of(variant, found) for seed in found[source] if seed is not None}


def _drop(found: dict[str, dict[Seed, dict]], variant: str, seed: Seed) -> None:
    """Remove ``seed``'s run of ``variant`` from ``found``, and each source left empty."""
    for source in [s for s in found if s == variant or s.startswith(f"{variant}/")]:
        found[source].pop(seed, None)
        if not found[source]:
            del found[source]
