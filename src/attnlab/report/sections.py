"""The report's sections in the story's order, each with the builder that fills it.

One entry per experiment of the catalogue (:mod:`attnlab.catalogue`; it has no E01: P0,
the base protocol, comes first, the sweeps last), its title and question read from it. A
builder reads :class:`Results` and fills the section's protocol, tables and figures from
the experiment's catalogue entry; it never raises for a missing measurement.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from attnlab.catalogue import experiments
from attnlab.report import computed_sections, sweep_section, trained_sections, winograd_section
from attnlab.report.content import Section
from attnlab.report.inputs import Results

Builder = Callable[[Results, Section], None]


@dataclass(frozen=True)
class Entry:
    """One section of the story: its id, title, the question it asks and its builder."""

    id: str
    title: str
    question: str
    build: Builder


# How each experiment's section is laid out, by catalogue id; what it shows (its rows, its
# probe and tables, its title and question) comes from the catalogue entry.
BUILDERS: dict[str, Builder] = {
    "P0": computed_sections.corpus,
    "E02": trained_sections.ladder,
    **dict.fromkeys(
        ("E03", "E04", "E05", "E06", "E07", "E10", "E12", "E14", "E15"),
        computed_sections.computed,
    ),
    "E08": trained_sections.dk,
    "E09": trained_sections.score_stats,
    "E11": trained_sections.norms,
    "E13": trained_sections.positions,
    "E16": winograd_section.winograd,
    "E17": winograd_section.winograd,
    "E18": trained_sections.depth,
    "E19": computed_sections.computed,
    "sweeps": sweep_section.sweeps,
}


def _story() -> tuple[Entry, ...]:
    """One entry per catalogue experiment, in its order, with the builder of its id."""
    return tuple(
        Entry(key, entry.title, entry.question, BUILDERS[key])
        for key, entry in experiments().items()
    )


STORY: tuple[Entry, ...] = _story()


def build_sections(results: Results) -> list[Section]:
    """Every section of the story in :data:`STORY`'s order, filled from ``results``."""
    sections = []
    for entry in STORY:
        section = Section(entry.id, entry.title, entry.question)
        entry.build(results, section)
        sections.append(section)
    return sections
