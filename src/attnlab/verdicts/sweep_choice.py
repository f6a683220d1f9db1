"""The catalogue's choice a study is answered against, and where its val/ppl comes from.

The Sweeps of docs/catalogue.md: the choice is the study's variant's own value of every
searched axis. Its val/ppl is that of a completed trial with exactly those values (found
by :mod:`attnlab.verdicts.sweep_answers`) or else the mean of the variant's own runs that
trained for exactly the study's steps per trial, so that such a trial would be that run
(:func:`measured_choice`); a record made at another budget does not count.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from attnlab.verdicts.rules import Measurements


@dataclass(frozen=True)
class Choice:
    """The catalogue's choice for a study.

    Attributes:
        variant: The study's variant (``dk-128-scaled``).
        values: That variant's own value of every searched axis (``d_head: 128``).
        measured: The variant's val/ppl trained under the study's protocol (the mean over
            its seeds), or ``None`` where it was not measured at the study's budget.
        seeds: How many seeds ``measured`` is the mean of.
    """

    variant: str
    values: Mapping[str, Any]
    measured: float | None = None
    seeds: int = 0


def measured_choice(
    results: Measurements, variant: str, values: Mapping[str, Any], steps_per_trial: Any
) -> Choice:
    """The choice ``variant`` (``values``: its value of each axis), with its own val/ppl.

    A seed of the variant's own runs stands in for the choice only when it trained for
    exactly ``steps_per_trial`` (its ``train.json`` ``steps``): then a trial with the
    choice's values would be that run.
    """
    steps = results.per_seed(f"{variant}/train", "steps")
    seeds = {
        seed: value
        for seed, value in results.per_seed(f"{variant}/eval", "val/ppl").items()
        if steps.get(seed) == steps_per_trial
    }
    measured = sum(seeds.values()) / len(seeds) if seeds else None
    return Choice(variant, dict(values), measured, len(seeds))
