"""Each claim decided again under its experiment's alternative protocols (its robustness).

An experiment of the catalogue may list protocols over choices the story leaves open
(``protocols``: dropout, weight decay, the Winograd budget), each mapping every row to a
trained variant, or re-reading the rows' own runs under another definition of a
measurement (``keys``: E11's gradient norm over weight matrices only; with ``reads: train``,
the lowest point of each run's validation curve, early stopping's). A claim is decided
under a protocol by the *same* rule and threshold as its main verdict, built from the
same catalogue entry with each row's measurements read from the protocol's variant, or
from the protocol's keys, instead (:func:`claim_under`), and judged by the same
:func:`~attnlab.verdicts.claims.judge` over the seeds found. The main verdict stays the
catalogue's protocol; these only stand beside it, with a one-line reading.
"""

from __future__ import annotations

from collections.abc import Mapping

from attnlab.catalogue import Experiment, Protocol, experiments
from attnlab.catalogue.entries import ClaimSpec, Measure, RuleSpec
from attnlab.verdicts.claim_rules import build_rule
from attnlab.verdicts.claims import judge
from attnlab.verdicts.decisions import (
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    NOT_RUN,
    Claim,
    Robustness,
    Verdict,
    variant_of,
)
from attnlab.verdicts.rules import Measurements

EVERY_FAILS = f"{FAILS} under every protocol tried"


def _source_under(source: str, rows: Mapping[str, str]) -> str:
    """``source`` read from the protocol's variant of its row (a probe's stays as it is)."""
    row = variant_of(source)
    if row not in rows:
        return source
    head, _, tail = source.partition(row)
    return head + rows[row] + tail


def _key_under(key: str, keys: Mapping[str, str]) -> str:
    """``key`` under the protocol's definitions: its prefix replaced when one is listed."""
    for prefix, instead in keys.items():
        if key.startswith(prefix):
            return instead + key.removeprefix(prefix)
    return key


def _record_under(source: str, reads: str) -> str:
    """``source`` read from the run's ``reads`` record (``norm-pre/eval`` -> ``norm-pre/train``)."""
    if reads == "eval" or not source.endswith("/eval"):
        return source  # a probe's record is the only one it has
    return source.removesuffix("eval") + reads


def _measure_under(measure: Measure, protocol: Protocol) -> Measure:
    source = _source_under(measure.source, protocol.rows)
    return measure.model_copy(
        update={
            "source": _record_under(source, protocol.reads),
            "key": _key_under(measure.key, protocol.keys),
        }
    )


def _spec_under(spec: RuleSpec, protocol: Protocol) -> RuleSpec:
    """``spec`` (a claim or one of its parts) reading every row as ``protocol`` says."""
    return spec.model_copy(
        update={
            "of": [_measure_under(m, protocol) for m in spec.of],
            "parts": [_spec_under(part, protocol) for part in spec.parts],
        }
    )


def claim_under(key: str, spec: ClaimSpec, protocol: Protocol) -> Claim:
    """Claim ``spec`` of experiment ``key`` with the same rule and threshold under ``protocol``."""
    rule = build_rule(_spec_under(spec, protocol))
    return Claim(spec.id, key, spec.says, rule, spec.reading)


def reading(main: Verdict, under: Mapping[str, Verdict]) -> str:
    """The one-line reading: where the protocols tried (``under``, by choice) differ from main.

    "holds when <choice>" for a protocol under which a claim that does not hold does;
    "<verdict> under every protocol tried" when none differs; "not run" when none ran.
    """
    ran = {choice: v for choice, v in under.items() if v.status != NOT_RUN}
    if not ran:
        return NOT_RUN
    parts = []
    for status in (HOLDS, FAILS, INCONCLUSIVE):
        choices = [choice for choice, v in ran.items() if v.status == status]
        if choices and status != main.status:
            parts.append(f"{status} when {' or when '.join(choices)}")
    return "; ".join(parts) or f"{main.status} under every protocol tried"


def claims_under_protocols(
    key: str, entry: Experiment, results: Measurements, verdicts: Mapping[str, Verdict]
) -> list[Robustness]:
    """Experiment ``key``'s claims under each of its protocols; empty when it has none.

    ``verdicts``: the main verdicts by claim id.
    """
    if not entry.protocols:
        return []
    found = []
    for spec in entry.claims:
        main = verdicts[spec.id]
        under = {
            protocol.choice: judge(claim_under(key, spec, protocol), results)
            for protocol in entry.protocols.values()
        }
        found.append(Robustness(main, under, reading(main, under)))
    return found


def robustness(
    results: Measurements,
    verdicts: list[Verdict],
    entries: Mapping[str, Experiment] | None = None,
) -> dict[str, list[Robustness]]:
    """Every claim of each experiment that lists protocols, under each, by experiment id.

    ``entries``: the experiments (default: the catalogue's).
    """
    by_id = {v.claim.id: v for v in verdicts}
    found = {
        key: claims_under_protocols(key, entry, results, by_id)
        for key, entry in (experiments() if entries is None else entries).items()
    }
    return {key: claims for key, claims in found.items() if claims}
