"""The report's sections in the story's order, each with the builder that fills it.

One section per experiment of the catalogue (:mod:`attnlab.catalogue`; it has no E01: P0,
the base protocol, comes first, the sweeps last), its title and question read from it. An
experiment is laid out by its shape unless it names a layout of its own
(:data:`LAYOUTS`): a Winograd task's rows by :mod:`attnlab.report.winograd_section`, a
probe's record and tables by :func:`~attnlab.report.computed_sections.computed`, trained
rows by :func:`~attnlab.report.default_section.rows_table`. A builder reads
:class:`Results` and the experiment's entry; it never raises for a missing measurement.
The sweeps' section lays out the study answers of the decisions
(:mod:`attnlab.report.sweep_section`). No builder decides a claim: the section's claims
are the decisions' verdicts, laid out by the templates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from attnlab.catalogue import Experiment, experiments
from attnlab.report import computed_sections, sweep_section, trained_sections, winograd_section
from attnlab.report.content import Section
from attnlab.report.default_section import rows_table
from attnlab.report.inputs import Results
from attnlab.verdicts.decisions import Decisions

Builder = Callable[[Results, Section, Experiment], None]

# The experiments whose story needs its own layout (its own table, its own figure), by
# catalogue id; every other one is laid out by its shape (:func:`builder`).
LAYOUTS: dict[str, Builder] = {
    "P0": computed_sections.corpus,
    "E02": trained_sections.ladder,
    "E08": trained_sections.dk,
    "E09": trained_sections.score_stats,
    "E11": trained_sections.norms,
    "E13": trained_sections.positions,
    "E18": trained_sections.depth,
}


def builder(key: str, entry: Experiment) -> Builder:
    """How experiment ``key`` is laid out: its own layout, else the one of its shape."""
    if key in LAYOUTS:
        return LAYOUTS[key]
    if entry.task:
        return winograd_section.winograd
    if entry.probe:
        return computed_sections.computed
    return rows_table


def build_sections(
    results: Results, decisions: Decisions, entries: Mapping[str, Experiment] | None = None
) -> list[Section]:
    """Every section of ``entries`` (default: the catalogue's) in order, from ``results``."""
    sections = []
    for key, entry in (experiments() if entries is None else entries).items():
        section = Section(key, entry.title, entry.question)
        if key == sweep_section.SWEEPS:
            sweep_section.sweeps(results, section, decisions)
        else:
            builder(key, entry)(results, section, entry)
        sections.append(section)
    return sections
