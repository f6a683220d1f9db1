"""One study of the Sweeps of docs/catalogue.md, resolved from params: what its trials train.

A trial is the study's variant (``dk-128-scaled``: E08's short protocol; ``norm-pre``: E11's
model) with the trial's values set over it, at the study's reduced budget: every step
count of the variant (steps, warmup, the ``val/ppl`` curve's interval, the pruner's
warm-up) scales by ``budget.scale`` times the study's ``budget``, exactly as
``budget.scale`` alone scales the train stage. One process per trial (devices 1, no DDP:
PITFALLS 8); workers give the parallelism.
"""

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import optuna
from optuna.trial import TrialState

from attnlab import result_code
from attnlab.config.loader import Params
from attnlab.config.sweeps import StudyParams, trial_variant
from attnlab.config.variants import BudgetParams
from attnlab.sweeps.check import study_params
from attnlab.sweeps.storage import is_embedded, open_storage
from attnlab.sweeps.study import make_pruner, make_sampler, open_study
from attnlab.training import TrainJob


def _digest(paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class Sweep:
    """Study ``key`` of params ``sweeps.studies``, with everything its trials read."""

    key: str
    params: Params

    @classmethod
    def named(cls, params: Params, key: str) -> "Sweep":
        """Study ``key`` of ``params``.

        Raises:
            ParamsError: no study has that name (the message lists the known ones).
        """
        study_params(params, key)
        return cls(key, params)

    @property
    def study(self) -> StudyParams:
        """The study's params."""
        return self.params.sweeps.studies[self.key]

    @property
    def name(self) -> str:
        """The study's name in the storage and its W&B group: ``sweep-<key>``."""
        return f"sweep-{self.key}"

    @property
    def budget(self) -> BudgetParams:
        """The trials' budget: ``budget.scale`` times the study's ``budget``."""
        return BudgetParams(scale=self.params.budget.scale * self.study.budget)

    @property
    def pruner_warmup_steps(self) -> int:
        """The pruner's warm-up in the trials' own steps."""
        return self.budget.steps(self.study.pruner.warmup_steps)

    def trial_job(self, number: int, values: dict[str, Any]) -> TrainJob:
        """Trial ``number``'s training job: the variant with ``values``, at the budget.

        One process per trial (devices 1, no DDP: PITFALLS 8); workers give parallelism.
        """
        p = self.params
        variant = trial_variant(
            f"{self.name}-{number}",
            self.study,
            values,
            p.variants,
            p.model,
            p.train,
            p.bpe.vocab_size,
        )
        steps, warmup = self.budget.schedule(variant.train)
        return TrainJob(
            variant=variant,
            seed=p.seed,
            budget_scale=self.budget.scale,
            steps=steps,
            warmup_steps=warmup,
            trainer=p.trainer.model_copy(update={"devices": 1, "num_nodes": 1, "strategy": "auto"}),
            runtime=p.runtime,
        )

    def protocol(self) -> dict[str, Any]:
        """How the trials were made, for the report (``best.json``)."""
        base = self.params.variant(self.study.variant)
        return {
            "variant": self.study.variant,
            "trials": self.study.trials,
            "budget": self.study.budget,
            "budget_scale": self.budget.scale,
            "steps_per_trial": self.budget.steps(base.train.steps),
            "curve_every_steps": self.params.evaluate.curve.every(self.budget),
            "pruner_warmup_steps": self.pruner_warmup_steps,
            "metric": "val/ppl on the whole validation split (P0), minimised",
            "seed": self.params.seed,
        }

    def definition(self, train_tokens: Path, val_tokens: Path) -> dict[str, Any]:
        """What a trial's value depends on, as plain JSON (the study's identity card).

        The study's params are in it, its reference trials among them: a changed reference
        starts the study afresh rather than mixing with the old one's trials. The trial
        count is left out: raising it continues the study. The hardware is left out too, so
        machines of different kinds can share one study.
        """
        base = self.params.variant(self.study.variant)
        code = result_code.files(result_code.STAGES["sweep"])
        definition = {
            "study": self.study.model_dump(exclude={"trials"}),
            "variant": {"model": dataclasses.asdict(base.model), "train": base.train.model_dump()},
            "budget_scale": self.budget.scale,
            "seed": self.params.seed,
            "curve": self.params.evaluate.curve.model_dump(),
            "data": _digest([train_tokens, val_tokens]),
            "code": _digest(code),
        }
        return json.loads(json.dumps(definition))

    def open(self, url: str, seed: int, train_tokens: Path, val_tokens: Path) -> optuna.Study:
        """Create or join the study in storage ``url``, its sampler seeded with ``seed``.

        The heartbeat is on and a trial whose worker died is retried with the same params
        (see :mod:`attnlab.sweeps.storage`). In the embedded journal (or SQLite) file a study
        of another definition is replaced; in a shared database it is refused. The study's
        reference trials are its first, enqueued once by whichever process creates it
        (:func:`attnlab.sweeps.study.open_study`): the stage, before its workers start.
        """
        beat = self.params.runtime.sweeps
        storage = open_storage(
            url, beat.heartbeat_interval_s, beat.grace_period_s, self.params.sweeps.max_retry
        )
        return open_study(
            storage,
            self.name,
            make_sampler(self.study.sampler, seed),
            make_pruner(self.study.pruner, self.pruner_warmup_steps),
            self.definition(train_tokens, val_tokens),
            replace_other=is_embedded(url),
            references=self.study.references,
        )


def worker_seed(seed: int) -> int:
    """A sampler seed of its own for one worker of a shared study, derived from ``seed``.

    Workers seeded alike would propose the same points; a shared study's order depends on
    which worker asks first, so it is not reproducible trial by trial anyway.
    """
    entropy = np.random.SeedSequence().entropy  # fresh OS entropy
    return int(np.random.SeedSequence([seed, entropy]).generate_state(1)[0])


def session_seed(seed: int, study: optuna.Study) -> int:
    """The sampler seed of this run of the stage on ``study``: new per run, yet reproducible.

    ``seed`` itself while no trial has started (a new study, its references waiting), so
    a study run in one go draws the same trials every time. A continued study (after a
    stop, or with more trials asked for) would otherwise draw its first points again,
    repeating earlier trials' params: its seed derives from ``seed`` and the number of
    trials started so far, the same for the same history.
    """
    started = sum(t.state != TrialState.WAITING for t in study.get_trials(deepcopy=False))
    if started == 0:
        return seed
    return int(np.random.SeedSequence([seed, started]).generate_state(1)[0])
