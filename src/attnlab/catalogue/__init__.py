"""The experiment catalogue (docs/catalogue.md as data), keyed by experiment id.

``experiments.yaml`` beside this module says what every experiment is: its title and
question, its protocol's place in docs/catalogue.md, its code, its rows (variant names of
params.yaml), what the evaluate stage measures on them, its claims, its figures and
charts, and its alternative protocols (each row's variant under a choice the story leaves
open; the params loader checks them against the resolved variants). Everything that
needs to know which experiment a variant belongs to asks here (the evaluate stage's
measurements, the Winograd task a variant trains on, the report's sections, rows and
claims, the charts of ``dvc plots show``, the README's table); nothing reads it off a
variant's name.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from attnlab.catalogue.entries import (
    Catalogue,
    Chart,
    ClaimSpec,
    Experiment,
    Measure,
    Protocol,
    Row,
    Task,
)
from attnlab.errors import AttnlabError

CATALOGUE_FILE = Path(__file__).with_name("experiments.yaml")


class CatalogueError(AttnlabError):
    """The catalogue file is malformed, or a query names something it does not hold."""


def parse_catalogue(raw: Any, source: str) -> Catalogue:
    """Validate the plain data of a catalogue file read from ``source``.

    Raises:
        CatalogueError: naming ``source`` and the offending key (``experiments.E13.rows``).
    """
    try:
        return Catalogue.model_validate(raw)
    except ValidationError as err:
        first = err.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"])
        message = first["msg"].removeprefix("Value error, ")
        raise CatalogueError(f"{source}: {where}: {message}") from None


@cache
def catalogue() -> Catalogue:
    """The validated catalogue of ``experiments.yaml``, read once.

    Raises:
        CatalogueError: naming the offending key.
    """
    return parse_catalogue(yaml.safe_load(CATALOGUE_FILE.read_text()), str(CATALOGUE_FILE))


def experiments() -> dict[str, Experiment]:
    """Every experiment by id, in the story's order (P0 first, the sweeps last)."""
    return catalogue().experiments


def experiment(experiment_id: str) -> Experiment:
    """The experiment ``experiment_id`` (``"E13"``).

    Raises:
        CatalogueError: no experiment has that id (the message lists them).
    """
    found = experiments().get(experiment_id)
    if found is None:
        raise CatalogueError(
            f"no experiment {experiment_id!r} in the catalogue; known: {', '.join(experiments())}"
        )
    return found


def experiments_of(*names: str) -> tuple[str, ...]:
    """The ids of the experiments with any of ``names`` among their rows, in story order.

    Pass a variant and its aliases to get every experiment that reads the variant's runs.
    A protocol's variant belongs to the experiment whose protocol it is, so it is measured
    (``measure``) and trained on its task (``task``) exactly as that experiment's rows.
    """
    return tuple(
        key
        for key, entry in experiments().items()
        if any(n in entry.variants or n in entry.protocol_variants for n in names)
    )


def protocol_variants_of(row: str) -> tuple[str, ...]:
    """The variants that are ``row`` under each protocol listing it: they change with it."""
    return tuple(
        protocol.rows[row]
        for entry in experiments().values()
        for protocol in entry.protocols.values()
        if row in protocol.rows
    )


def measurements_of(experiment_ids: tuple[str, ...]) -> tuple[str, ...]:
    """What the evaluate stage adds for the rows of ``experiment_ids``, each once, in order."""
    found = (m for key in experiment_ids for m in experiment(key).measure)
    return tuple(dict.fromkeys(found))


def measurements_for(*names: str) -> tuple[str, ...]:
    """What the evaluate stage adds for a run that rows ``names`` read (a variant, its aliases)."""
    return measurements_of(experiments_of(*names))


def winograd_task(variant: str) -> Task | None:
    """The Winograd task ``variant`` trains on: its experiment's ``task``.

    ``None`` when no Winograd experiment has it among its rows.
    """
    tasks = {experiment(key).task for key in experiments_of(variant)} - {None}
    if len(tasks) > 1:
        raise CatalogueError(f"{variant} is a row of two Winograd tasks: {sorted(tasks)}")
    return next(iter(tasks), None)


def charts_of(experiment_id: str) -> list[Chart]:
    """The charts of ``dvc plots show`` that draw ``experiment_id``'s rows."""
    return [chart for chart in catalogue().charts if experiment_id in chart.experiments]


__all__ = [
    "CATALOGUE_FILE",
    "Catalogue",
    "CatalogueError",
    "Chart",
    "ClaimSpec",
    "Experiment",
    "Measure",
    "Protocol",
    "Row",
    "Task",
    "catalogue",
    "charts_of",
    "experiment",
    "experiments",
    "experiments_of",
    "measurements_for",
    "measurements_of",
    "protocol_variants_of",
    "parse_catalogue",
    "winograd_task",
]
