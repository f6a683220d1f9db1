"""Each claim decided again under its experiment's alternative protocols: the robustness table.

An experiment of the catalogue may list protocols over choices the story leaves open
(``protocols``: dropout, weight decay, the Winograd budget), each mapping every row to a
trained variant, or re-reading the rows' own runs under another definition of a
measurement (``keys``: E11's gradient norm over weight matrices only). A claim is decided
under a protocol by the *same* rule and threshold as its main verdict, built from the
same catalogue entry with each row's measurements read from the protocol's variant, or
from the protocol's keys, instead (:func:`claim_under`), and judged by the same
:func:`~attnlab.report.claims.judge` over the seeds found. The main verdict stays the
catalogue's protocol; this table only stands beside it, with a one-line reading.
"""

from __future__ import annotations

from collections.abc import Mapping

from attnlab.catalogue import Experiment, Protocol, experiments
from attnlab.catalogue.entries import ClaimSpec, Measure, RuleSpec
from attnlab.report.claim_rules import build_rule
from attnlab.report.claims import NOT_RUN, Claim, Verdict, judge, variant_of
from attnlab.report.content import Table
from attnlab.report.render import basis
from attnlab.report.results import Results
from attnlab.report.rules import FAILS, HOLDS, INCONCLUSIVE

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


def _measure_under(measure: Measure, protocol: Protocol) -> Measure:
    return measure.model_copy(
        update={
            "source": _source_under(measure.source, protocol.rows),
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


def _runs(name: str, protocol: Protocol) -> str:
    """What the protocol's verdicts read, for the table's note."""
    if protocol.keys:
        read = ", ".join(f"{old} as {new}" for old, new in protocol.keys.items())
        return f"{name}: the rows' own runs, reading {read}"
    return f"{name}: {', '.join(protocol.rows.values())}"


def reading(main: Verdict, under: Mapping[str, Verdict]) -> str:
    """The table's one line: where the protocols tried (``under``, by choice) differ from main.

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


def _cell(verdict: Verdict) -> str:
    shown = basis(verdict)
    return f"{verdict.status} ({shown})" if shown else verdict.status


def robustness_table(
    key: str, entry: Experiment, results: Results, verdicts: Mapping[str, Verdict]
) -> Table | None:
    """Experiment ``key``'s claims under each of its protocols; ``None`` when it has none.

    ``verdicts``: the main verdicts by claim id, shown first.
    """
    if not entry.protocols or not entry.claims:
        return None
    rows = []
    for spec in entry.claims:
        main = verdicts[spec.id]
        under = {
            protocol.choice: judge(claim_under(key, spec, protocol), results)
            for protocol in entry.protocols.values()
        }
        rows.append(
            (
                spec.id,
                spec.says,
                _cell(main),
                *(_cell(v) for v in under.values()),
                reading(main, under),
            )
        )
    names = tuple(f"{name}: {p.choice}" for name, p in entry.protocols.items())
    runs = "; ".join(_runs(name, p) for name, p in entry.protocols.items())
    note = (
        "Each claim decided again by the same rule and threshold from each protocol's own "
        "runs over the seeds found (n and the deciding interval beside each verdict). The "
        "main verdict is the catalogue's protocol's; the others only explain it. "
        f"The protocols' variants: {runs}."
    )
    header = ("claim", "the story says", "catalogue's protocol", *names, "reading")
    return Table("The claims under other protocols", header, tuple(rows), note)


def robustness_tables(results: Results, verdicts: list[Verdict]) -> dict[str, Table]:
    """The robustness table of every experiment that lists protocols, by experiment id."""
    by_id = {v.claim.id: v for v in verdicts}
    tables = {
        key: robustness_table(key, entry, results, by_id) for key, entry in experiments().items()
    }
    return {key: table for key, table in tables.items() if table is not None}
