"""Every decision of the record in one call: :func:`decide`.

The report stage reads what the pipeline measured and calls :func:`decide` once; the
report lays out what it returns (:class:`~attnlab.verdicts.decisions.Decisions`) and
decides nothing itself. One call judges every claim of the catalogue (the sweeps'
best-trial checks among them, ``sweeps.<study>``), each again under its experiment's
other protocols, and answers each Optuna study against the catalogue's choice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from attnlab.catalogue import Experiment
from attnlab.verdicts.claims import catalogue_claims, judge_all
from attnlab.verdicts.decisions import Answer, Decisions
from attnlab.verdicts.robustness import robustness
from attnlab.verdicts.rules import Measurements
from attnlab.verdicts.sweep_answers import answer
from attnlab.verdicts.sweep_choice import Choice, measured_choice
from attnlab.verdicts.sweep_thresholds import rescue_warmup
from attnlab.verdicts.sweep_trials import read_trials


class StudyRecord(Protocol):
    """One Optuna study as recorded: ``best.json`` and the rows of ``trials.csv``."""

    best: Mapping[str, Any]
    trials: Sequence[Mapping[str, str]]


class Record(Measurements, Protocol):
    """What the pipeline measured, and the params the report stage read beside it.

    ``params``: ``sweeps`` (per study its ``variant``, ``choice`` and ``references``)
    and ``variants`` (per variant its resolved ``model`` and ``train``).
    """

    sweeps: Mapping[str, StudyRecord]
    params: Mapping[str, Any]


def decide(record: Record, entries: Mapping[str, Experiment] | None = None) -> Decisions:
    """Every verdict, robustness reading and study answer of ``record``.

    Args:
        record: The measurements and the report's params.
        entries: The experiments whose claims are decided (default: the catalogue's).

    Returns:
        The decisions, each as a typed value the report lays out.
    """
    verdicts = judge_all(record, catalogue_claims(entries))
    return Decisions(
        verdicts=verdicts,
        robustness=robustness(record, verdicts, entries),
        answers={study: study_answer(record, study) for study in record.sweeps},
    )


def study_answer(record: Record, study: str) -> Answer:
    """What study ``study``'s completed trials say about its references and the choice."""
    given = (record.params.get("sweeps") or {}).get(study) or {}
    return answer(
        read_trials(record.sweeps[study].trials),
        choice_of(record, study),
        given.get("references") or (),
        rescue_warmup(record.params.get("variants") or {}),
    )


def choice_of(record: Record, study: str) -> Choice:
    """The catalogue's choice for ``study`` as the params give it, with its own val/ppl.

    Its variant and values are the report's params (``sweeps``); the steps per trial its
    runs must have trained for, the study's recorded protocol.
    """
    given = (record.params.get("sweeps") or {}).get(study) or {}
    recorded = record.sweeps[study].best.get("protocol") or {}
    variant = given.get("variant") or recorded.get("variant") or "its variant"
    return measured_choice(
        record, variant, given.get("choice") or {}, recorded.get("steps_per_trial")
    )
