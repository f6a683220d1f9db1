"""A trained run's configuration fingerprint: what its record was trained and measured under.

Every trained row of docs/catalogue.md is a run of one variant under one seed. Its
``train.json`` and ``eval.json`` each record the fingerprint of the configuration that
shaped them (:func:`run_configuration`), and the report computes the same fingerprints
from the current params for every run it expects: a record whose fingerprint differs (a
15-step run beside 3000-step ones, a recipe since edited) is left out as stale, never
averaged with the others.

The fingerprint hashes the resolved params only: the variant's model and recipe, the
budget-scaled steps and warmup, the seeds, the trainer's numeric knobs and, for what the
evaluate stage measures, its knobs. Not the library code: a checkpoint's fingerprint
hashes the code so that a run never resumes weights other code wrote, but in the record
every code edit would orphan every run; DVC's code deps already say which stages an edit
makes stale. A record written before fingerprints (the committed record) is judged by the
configuration fields it states itself (:attr:`RunConfiguration.stated`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from attnlab.config.loader import Params

FINGERPRINT = "fingerprint"  # the key of a record's fingerprint
TRAIN, EVAL = "train", "eval"  # the records of a run: train.json, eval.json
# The trainer knobs that change the numbers; the device count and kernels change only the
# speed (the record states them for that), so a run moved to a GPU stays current.
NUMERIC_TRAINER = ("precision", "matmul_precision")


@dataclass(frozen=True)
class RunConfiguration:
    """The configuration one run's records must state to be read as a run of the params.

    Attributes:
        fingerprints: Per record (:data:`TRAIN`, :data:`EVAL`), its fingerprint.
        stated: What the records state of their own configuration, as the params give
            it: the seeds, and in ``train.json`` the steps, tokens and precision. A
            record without a fingerprint is still compared on the fields it has.
    """

    fingerprints: dict[str, str]
    stated: dict[str, Any]

    def differs(self, kind: str, record: Mapping[str, Any]) -> str | None:
        """Why ``record`` (a run's ``train.json`` or ``eval.json``) is not of this run, or None.

        The stated fields come first, as they say how (``steps 15, params give 3000``);
        then the fingerprint, which a record written before fingerprints lacks.
        """
        for key, expected in self.stated.items():
            if key in record and record[key] != expected:
                return f"{kind}.json {key} {record[key]}, params give {expected}"
        found = record.get(FINGERPRINT)
        if found is not None and found != self.fingerprints[kind]:
            return (
                f"{kind}.json configuration {found}, params give {self.fingerprints[kind]} "
                "(a knob of the variant, the budget or evaluate changed)"
            )
        return None


def _digest(described: Mapping[str, Any]) -> str:
    canonical = json.dumps(described, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def run_configuration(config: Mapping[str, Any], params: Params) -> RunConfiguration:
    """The configuration of a run's records under ``params``.

    Args:
        config: The run's resolved configuration, as
            :meth:`attnlab.training.TrainJob.config` gives it and the model folder's
            ``config.json`` keeps it (the budget-scaled steps and warmup, the seeds).
        params: The params the run's records are measured under.

    ``train.json`` (and the curves) are shaped by the resolved model and recipe, the
    scaled steps and warmup, the seeds, the numeric trainer knobs and the val/ppl curve's
    windows (params ``seed`` and ``evaluate.curve``); ``eval.json`` by the same run and the
    evaluate knobs that change a value (``seed``, ``evaluate.lengths``,
    ``evaluate.stats_windows``; not the device or the batch size).
    """
    seeds = {key: config[key] for key in ("seed", "init_seed", "data_seed")}
    run = {
        "model": config["model"],
        "train": config["train"],
        "steps": config["steps"],
        "warmup_steps": config["warmup_steps"],
        **seeds,
        "trainer": {key: config["trainer"][key] for key in NUMERIC_TRAINER},
    }
    curve = params.evaluate.curve  # each point scores the whole validation split
    trained = {
        **run,
        "curve": {"windows": "whole split", "every": curve.every(params.budget)},
    }
    evaluated = {
        **run,
        "evaluate": {
            "seed": params.seed,
            "lengths": params.evaluate.lengths,
            "stats_windows": params.evaluate.stats_windows,
        },
    }
    tokens_per_step = config["train"]["batch_size"] * config["model"]["block_size"]
    return RunConfiguration(
        fingerprints={TRAIN: _digest(trained), EVAL: _digest(evaluated)},
        stated={
            **seeds,
            "steps": config["steps"],
            "tokens_seen": config["steps"] * tokens_per_step,
            "precision": config["trainer"]["precision"],
        },
    )
