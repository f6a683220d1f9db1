"""The Winograd task's results as the report reads them (E16, E17): scores, curves, maps.

The sentence is one template of word tokens::

    the {x} did not cross the {y} because it was too {adj} , so the {ref} waited .

so the first noun sits at position 1, the second at 6, the adjective at 11 and the query
(the ``the`` after ``so``, which predicts the referent) at 14. A map is the row of attention
weights at the query position over positions 0-14, per block, averaged over heads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from attnlab.catalogue import experiments
from attnlab.report.results import Point, Results
from attnlab.report.stats import Seed

TEMPLATE = "the {x} did not cross the {y} because it was too {adj} , so the {ref} waited ."
WORDS = tuple(TEMPLATE.split())
FIRST_NOUN, SECOND_NOUN, ADJECTIVE = WORDS.index("{x}"), WORDS.index("{y}"), WORDS.index("{adj}")
QUERY = WORDS.index("{ref}") - 1
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


def source(variant: str) -> str:
    """The metrics file (under the metrics folder, no suffix) of one Winograd model."""
    return f"winograd/{variant}"


def accuracy_curve(results: Results, variant: str) -> dict[Seed, list[Point]]:
    """Per seed, the held-out accuracy along training of one Winograd model (empty if none).

    winograd-train writes it as ``winograd/<variant>/seed-<s>/accuracy.csv`` (step,
    accuracy) at steps 0, 1, 2, 4, ... and the last.
    """
    return results.curve(f"{source(variant)}/accuracy", "accuracy")


def _maps_record(results: Results, name: str) -> Any:
    """The maps record of ``name``, by adjective.

    That is the ``adjectives`` of any JSON file whose ``variant`` is ``name``, or else a
    ``maps`` entry in the model's own metrics file.
    """
    variant = name.removeprefix("winograd/")
    records = [record for runs in results.metrics.values() for record in runs.values()]
    for record in (*records, *results.documents.values()):
        if record.get("variant") == variant and isinstance(record.get("adjectives"), dict):
            return record["adjectives"]
    return results.raw(name, "maps") or {}


def read_maps(results: Results, name: str) -> Maps:
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


def demo_payload(results: Results) -> dict[str, Any]:
    """The maps of every Winograd model that has them, for the browser demo (JSON-ready)."""
    payload: dict[str, Any] = {}
    tasks = {key: entry for key, entry in experiments().items() if entry.task}
    for key, entry in tasks.items():
        for row in entry.rows:
            maps = read_maps(results, source(row.variant))
            if maps:
                payload[f"{key}, {entry.task}, {row.label}"] = {
                    adj: {
                        "tokens": list(m.tokens),
                        "blocks": [list(b) for b in m.blocks],
                        "role": "crosser" if adj in CROSSER else "crossed",
                        "answer": m.answer,
                    }
                    for adj, m in maps.items()
                }
    return payload
