"""The attention maps of a Winograd model, as E17's claims read them.

A map is the row of attention weights at the query position (the ``the`` after ``so``,
which predicts the referent) over the sentence's words up to it, per block, averaged over
heads, for each of the eight adjectives. The sentence's positions are the task's own
(:mod:`attnlab.catalogue.winograd`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from attnlab.verdicts.rules import Measurements

# winograd.yaml's adjectives by role (params winograd.adjectives). E17's rules are built
# with the catalogue, before any params are read, so the roles are named here as well; a
# test checks that the two agree.
CROSSER = ("tired", "scared", "slow", "weak")  # "it" is the one who did not cross
CROSSED = ("wet", "wide", "busy", "steep")  # "it" is the thing not crossed


@dataclass(frozen=True)
class MapRow:
    """One sentence's attention at the query position: a row per block, over its words."""

    adjective: str
    tokens: tuple[str, ...]
    blocks: tuple[tuple[float, ...], ...]
    answer: str = ""  # what the model predicts at the query, when the stage recorded it


Maps = dict[str, MapRow]


def _maps_record(results: Measurements, name: str) -> Any:
    """The maps record of ``name``, by adjective.

    That is the ``adjectives`` of any JSON record whose ``variant`` is ``name``, or else a
    ``maps`` entry in the model's own metrics file.
    """
    variant = name.removeprefix("winograd/")
    for record in results.records():
        if record.get("variant") == variant and isinstance(record.get("adjectives"), dict):
            return record["adjectives"]
    return results.record(name).get("maps") or {}


def read_maps(results: Measurements, name: str) -> Maps:
    """The maps of Winograd model ``name``, by adjective; empty when none were drawn.

    Each adjective's entry holds ``tokens`` (the sentence up to the query) and ``blocks``
    (per block, the head-averaged weights from the query to each of those tokens).
    """
    raw = _maps_record(results, name)
    maps: Maps = {}
    for adjective in (*CROSSER, *CROSSED):
        entry = raw.get(adjective) if isinstance(raw, dict) else None
        if not isinstance(entry, dict):
            continue
        try:
            blocks = tuple(tuple(float(w) for w in row) for row in entry["blocks"])
            tokens = tuple(str(t) for t in entry["tokens"])
        except (KeyError, TypeError, ValueError):
            continue
        if blocks and all(len(row) == len(tokens) for row in blocks):
            maps[adjective] = MapRow(adjective, tokens, blocks, str(entry.get("answer", "")))
    return maps
