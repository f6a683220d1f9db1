"""The robustness table: each claim of an experiment beside its verdict under each protocol.

The verdicts are :mod:`attnlab.verdicts.robustness`'s, decided by the same rule and
threshold from each protocol's runs; here they become one table per experiment, shown
after its claims.
"""

from __future__ import annotations

from collections.abc import Mapping

from attnlab.catalogue import Experiment, Protocol, experiments
from attnlab.report.content import Table
from attnlab.report.verdict_text import status_cell
from attnlab.verdicts.decisions import Robustness


def _runs(name: str, protocol: Protocol) -> str:
    """What the protocol's verdicts read, for the table's note."""
    if protocol.keys:
        read = ", ".join(f"{old} as {new}" for old, new in protocol.keys.items())
        return f"{name}: the rows' own runs, reading {read} (from {protocol.reads}.json)"
    return f"{name}: {', '.join(protocol.rows.values())}"


def robustness_table(entry: Experiment, claims: list[Robustness]) -> Table:
    """The table of ``entry``'s ``claims``, each decided under each of its protocols."""
    rows = tuple(
        (
            found.main.claim.id,
            status_cell(found.main),
            *(status_cell(v) for v in found.under.values()),
            found.reading,
        )
        for found in claims
    )
    # The columns are named, the choices spelled out in the note: E11 tries six protocols.
    choices = "; ".join(f"{name}: {p.choice}" for name, p in entry.protocols.items())
    runs = "; ".join(_runs(name, p) for name, p in entry.protocols.items())
    note = (
        "Each claim decided again by the same rule and threshold from each protocol's own "
        "runs over the seeds found (n and the deciding interval beside each verdict). The "
        "main verdict is the catalogue's protocol's; the others only explain it. "
        f"The protocols: {choices}. What each reads: {runs}."
    )
    # No "the story says": the claims table just above has it, and E11's is wide enough.
    header = ("claim", "catalogue's protocol", *entry.protocols, "reading")
    return Table("The claims under other protocols", header, rows, note)


def robustness_tables(
    decided: Mapping[str, list[Robustness]], entries: Mapping[str, Experiment] | None = None
) -> dict[str, Table]:
    """The robustness table of every experiment in ``decided``, by experiment id.

    ``entries``: the experiments (default: the catalogue's).
    """
    found = experiments() if entries is None else entries
    return {key: robustness_table(found[key], claims) for key, claims in decided.items()}
