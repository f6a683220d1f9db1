"""A study's trials as its answer reads them (the Sweeps of docs/catalogue.md).

Pure: the rows of the sweep stage's ``trials.csv`` as :class:`Trial` records. The rules
that answer a study's question from these trials are :mod:`attnlab.verdicts.sweep_answers`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

COMPLETE = "COMPLETE"
PRUNED = "PRUNED"
# trials.csv's own columns; every other column is a searched parameter.
TRIAL_COLUMNS = (
    "number",
    "state",
    "value",
    "duration_s",
    "wandb_run_id",
    "worker",
    "retry_of",
    "pruned_at",
    "note",
)


@dataclass(frozen=True)
class Trial:
    """One row of ``trials.csv``: its number, state, objective and searched values.

    ``pruned_at`` is the step the pruner stopped a PRUNED trial at (None where unknown).
    """

    number: int
    state: str
    value: float | None
    params: Mapping[str, Any]
    run_id: str = ""
    pruned_at: int | None = None

    @property
    def is_result(self) -> bool:
        """Whether this trial's value is a result: COMPLETE, with a finite objective."""
        return self.state == COMPLETE and self.value is not None and math.isfinite(self.value)

    def has(self, values: Mapping[str, Any]) -> bool:
        """Whether this trial ran with every one of ``values`` (a point of its space)."""
        return all(key in self.params and self.params[key] == v for key, v in values.items())


def parse_value(text: str) -> Any:
    """A searched value as ``trials.csv`` writes it: a bool, an int, a float, or text."""
    if text in ("True", "False"):
        return text == "True"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return text


def read_trials(rows: Sequence[Mapping[str, str]]) -> list[Trial]:
    """The trials of ``trials.csv``'s rows (an empty value cell: no value)."""
    trials = []
    for row in rows:
        value = row.get("value", "")
        trials.append(
            Trial(
                number=int(row["number"]),
                state=row.get("state", ""),
                value=float(value) if value else None,
                params={
                    k: parse_value(v) for k, v in row.items() if k not in TRIAL_COLUMNS and v != ""
                },
                run_id=row.get("wandb_run_id", ""),
                pruned_at=int(row["pruned_at"]) if row.get("pruned_at") else None,
            )
        )
    return trials
