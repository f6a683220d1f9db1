"""The best-trial check of a study (the Sweeps of docs/catalogue.md): what ``sweep-check`` trains.

A study's best trial ran once, under params ``seed``, and at the study's budget; its value
is the best of many draws, so it is biased low. The check trains the best trial's
configuration again as a normal run under each seed of params ``seeds``, at the full
length of the study's variant, beside that variant's own runs (the catalogue's choice), so
that the report can compare the two seed by seed. The check's variant is the study's
variant with ``best.json``'s params set over it, exactly as the trial was
(:func:`attnlab.config.sweeps.trial_variant`); it is named ``sweep-check-<study>``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from attnlab.config.loader import Params
from attnlab.config.sweeps import StudyParams, catalogue_choice, trial_variant
from attnlab.config.variants import Variant
from attnlab.errors import AttnlabError, ParamsError
from attnlab.paths import read_metrics


def check_name(study: str) -> str:
    """The check's variant name: ``sweep-check-<study>`` (experiment ``sweep``)."""
    return f"sweep-check-{study}"


def study_params(params: Params, study: str) -> StudyParams:
    """Study ``study`` of params ``sweeps.studies``.

    Raises:
        ParamsError: no study has that name (the message lists the known ones).
    """
    if study not in params.sweeps.studies:
        known = ", ".join(sorted(params.sweeps.studies))
        raise ParamsError(f"sweeps.studies.{study}: no such study; known: {known}")
    return params.sweeps.studies[study]


def read_best_params(path: Path, study: str, axes: list[str]) -> dict[str, Any]:
    """The best trial's params from the study's ``best.json``, one per searched axis.

    Raises:
        AttnlabError: the file is missing or unreadable, or its params are not exactly
            the study's axes (a ``best.json`` of another search space).
    """
    if not path.is_file():
        raise AttnlabError(
            f"{path}: missing: the study has not run; run `dvc repro sweep@{study}` first"
        )
    try:
        params = read_metrics(path)["params"]
    except (AttnlabError, KeyError) as err:
        raise AttnlabError(f"{path}: no best trial's params ({err})") from None
    if not isinstance(params, dict) or sorted(params) != sorted(axes):
        raise AttnlabError(
            f"{path}: params {params!r} are not the axes of sweeps.studies.{study}.space "
            f"({', '.join(axes)}): rerun `dvc repro sweep@{study}`"
        )
    return params


def check_variant(params: Params, study: str, best: dict[str, Any]) -> Variant:
    """The study's variant with the best trial's ``best`` params set over it, as the trial was.

    Raises:
        ParamsError: no such study, or the params make an invalid model or recipe.
    """
    return trial_variant(
        check_name(study),
        study_params(params, study),
        best,
        params.variants,
        params.model,
        params.train,
        params.bpe.vocab_size,
    )


def check_record(params: Params, study: str, best: dict[str, Any]) -> dict[str, Any]:
    """What the check trained, for its ``eval.json``: the best params against the choice."""
    spec = study_params(params, study)
    choice = catalogue_choice(spec, params.variant(spec.variant))
    return {
        "study": study,
        "variant": spec.variant,
        "best_params": best,
        "choice": choice,
        "same_as_choice": best == choice,
    }
