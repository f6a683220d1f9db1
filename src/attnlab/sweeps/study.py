"""A study that ends with exactly its target number of finished trials, on any number of workers.

Serves the Sweeps of docs/catalogue.md. A trial is *finished* when it is COMPLETE or PRUNED;
``MaxTrialsCallback`` stops a worker once the study holds ``target`` of them. That alone
overshoots when several workers share a study: a worker that asks for a trial while the
others run the last ones adds one too many. So before each ``ask`` a worker waits while
every free slot is held by a trial running elsewhere (:class:`SlotGate`): that trial
either finishes (and the study is full) or its worker dies, its heartbeat goes stale, and
the retry Optuna enqueues (WAITING, same params) is the next trial asked for. Two workers
passing the gate at the same instant are resolved inside the trial (:func:`guarded`): the
later trial number waits, and ends FAIL with the user attribute ``surplus`` if the study
filled up meanwhile. A trial that raises is FAIL with its error in the user attribute
``error``, and the study goes on; ``max_failed`` of them stop the worker (a bug, not luck).
A trial stopped by SIGTERM or SIGINT (``dvc queue kill``, a batch scheduler's pre-emption,
Ctrl-C) stops its worker too: the trial is FAIL with the user attribute ``interrupted``,
its params wait as a new trial for the next worker (which continues from the stopped
trial's checkpoint, objective.py), and the worker exits with an error rather than
starting another trial it was asked not to run.
"""

import logging
import os
import socket
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import optuna
from optuna.exceptions import DuplicatedStudyError, ExperimentalWarning
from optuna.pruners import MedianPruner
from optuna.samplers import TPESampler
from optuna.storages import BaseStorage, fail_stale_trials
from optuna.study import MaxTrialsCallback
from optuna.trial import FrozenTrial, Trial, TrialState

from attnlab.config.sweeps import PrunerParams, SamplerParams
from attnlab.errors import AttnlabError
from attnlab.training import TrainingInterrupted
from attnlab.training.signals import stop_requested

log = logging.getLogger(__name__)

FINISHED = (TrialState.COMPLETE, TrialState.PRUNED)
# Trial user attributes: what the objective raised, a trial SIGTERM stopped, a surplus
# trial, the trial's W&B run, and the worker (host:pid) that ran it.
ERROR_ATTR = "error"
INTERRUPTED_ATTR = "interrupted"
SURPLUS_ATTR = "surplus"
WANDB_ATTR = "wandb_run_id"
WORKER_ATTR = "worker"
Objective = Callable[[Trial], float]
# How long a process that finds a study without its definition waits for the creator to
# store it (creating, enqueueing the references and storing take well under a second).
CREATION_GRACE_S = 10.0
_CREATION_POLL_S = 0.2


class SweepError(AttnlabError):
    """A study cannot go on: too many trials raised, or it was defined differently."""


class TrialError(Exception):
    """A trial's training or evaluation raised; the trial is FAIL and the study goes on."""


class SweepInterrupted(AttnlabError):
    """SIGTERM or SIGINT stopped a trial; its params wait for the next worker, this one stops."""


class SurplusTrial(Exception):
    """A trial asked for after its study was full; FAIL, never counted, never retried."""


@dataclass(frozen=True)
class Tally:
    """How a study's trials stand: finished (COMPLETE or PRUNED), running, waiting, raised."""

    finished: int
    running: int
    waiting: int
    errors: int

    @classmethod
    def of(cls, trials: Iterable[FrozenTrial]) -> "Tally":
        """Count ``trials`` by state; ``errors`` are FAIL trials whose objective raised."""
        counts = {"finished": 0, "running": 0, "waiting": 0, "errors": 0}
        for trial in trials:
            if trial.state in FINISHED:
                counts["finished"] += 1
            elif trial.state == TrialState.RUNNING:
                counts["running"] += 1
            elif trial.state == TrialState.WAITING:
                counts["waiting"] += 1
            elif ERROR_ATTR in trial.user_attrs:
                counts["errors"] += 1
        return cls(**counts)

    def full(self, target: int) -> bool:
        """Whether every slot is finished, running, or waiting for a worker."""
        return self.finished + self.running + self.waiting >= target


def tally(study: optuna.Study, below: int | None = None) -> Tally:
    """The study's :class:`Tally`.

    With ``below``, running and waiting trials count only when numbered lower: an earlier
    claim on a slot than trial ``below``'s.
    """
    trials = study.get_trials(deepcopy=False)
    if below is not None:
        pending = (TrialState.RUNNING, TrialState.WAITING)
        trials = [t for t in trials if t.state not in pending or t.number < below]
    return Tally.of(trials)


def make_sampler(params: SamplerParams, seed: int) -> TPESampler:
    """The seeded TPE sampler of params ``sweeps.studies.<study>.sampler``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExperimentalWarning)  # multivariate, constant_liar
        return TPESampler(
            seed=seed,
            n_startup_trials=params.n_startup_trials,
            multivariate=params.multivariate,
            constant_liar=params.constant_liar,
        )


def make_pruner(params: PrunerParams, warmup_steps: int) -> MedianPruner:
    """The median pruner, its warm-up already in the trials' own steps (budget applied)."""
    return MedianPruner(n_startup_trials=params.n_startup_trials, n_warmup_steps=warmup_steps)


def open_study(
    storage: str | BaseStorage,
    name: str,
    sampler: optuna.samplers.BaseSampler,
    pruner: optuna.pruners.BasePruner,
    definition: dict[str, Any],
    replace_other: bool,
    references: Sequence[dict[str, Any]] = (),
) -> optuna.Study:
    """Create the study ``name`` (minimising), or load it if it exists.

    ``definition`` (plain JSON: the search space, the reference trials, the variant, the
    budget, digests of the data and code a trial's result depends on) is stored as the
    study's user attribute ``definition`` when the study is created and compared on every
    load, so trials of two different experiments never mix in one study. A stored study
    of another definition is deleted and started afresh when ``replace_other`` (the
    embedded journal file, which only its stage writes), and refused otherwise (a shared
    database: its trials are other people's work too).

    The process that creates the study enqueues ``references`` as its first trials, then
    stores the definition. Creating a study is atomic in the journal file and in a
    database, so however many workers start at once, on one machine or on many, exactly
    one enqueues them. A process that finds the study but not yet its definition waits
    for its creator (:data:`CREATION_GRACE_S`); if none appears the creator died between
    the two steps, and this process enqueues what is missing and stores the definition.

    Raises:
        SweepError: the stored study has another definition and ``replace_other`` is False.
    """
    try:
        study = optuna.create_study(
            storage=storage, study_name=name, sampler=sampler, pruner=pruner, direction="minimize"
        )
        stored = None
    except DuplicatedStudyError:
        study = optuna.load_study(study_name=name, storage=storage, sampler=sampler, pruner=pruner)
        stored = _stored_definition(study)
    if stored is not None and stored != definition:
        if not replace_other:
            raise SweepError(
                f"study {name} exists in the shared storage with another definition (params, "
                "data or code differ): check out the same commit on every machine, or delete "
                f"the old study first (optuna delete-study --study-name {name} --storage ...)"
            )
        log.info("study %s: params, data or code changed; starting it afresh", name)
        optuna.delete_study(study_name=name, storage=storage)
        return open_study(storage, name, sampler, pruner, definition, replace_other, references)
    if stored is None:
        for params in references:
            # Skips a reference a creator that died after enqueueing it left behind.
            study.enqueue_trial(dict(params), skip_if_exists=True)
        study.set_user_attr("definition", definition)
    return study


def _stored_definition(study: optuna.Study) -> dict[str, Any] | None:
    """The study's stored definition, once its creator has stored it (None: it never did)."""
    deadline = time.monotonic() + CREATION_GRACE_S
    while (stored := study.user_attrs.get("definition")) is None and time.monotonic() < deadline:
        time.sleep(_CREATION_POLL_S)
    return stored


class SlotGate:
    """Before the first trial and after each: go on only if a slot is free, else wait.

    A slot is free when a trial waits to be retried, or finished + running trials are
    fewer than ``target``. While running trials hold every slot the gate polls every
    ``poll_s`` seconds, failing stale trials itself so that a dead worker's trial is retried.

    A stop signal recorded before the gate opens stops the worker here, before it asks
    for a trial: asked, the trial (perhaps another worker's retry) would only be failed
    and handed on, spending one of its retries.

    Raises:
        SweepError: the study holds ``max_failed`` trials that raised.
        SweepInterrupted: SIGTERM or SIGINT arrived between trials or while waiting.
    """

    def __init__(self, target: int, max_failed: int, poll_s: float) -> None:
        self.target, self.max_failed, self.poll_s = target, max_failed, poll_s

    def wait(self, study: optuna.Study) -> bool:
        """Block until a slot is free (True) or the study is full (False)."""
        while True:
            if (stopped_by := stop_requested()) is not None:
                raise SweepInterrupted(
                    f"stopped by {stopped_by} between trials; the study is as it was"
                )
            now = tally(study)
            if now.finished >= self.target:
                return False
            if now.errors >= self.max_failed:
                raise SweepError(
                    f"study {study.study_name}: {now.errors} trials raised (max_failed is "
                    f"{self.max_failed}); see their user attribute {ERROR_ATTR!r}"
                )
            if now.waiting or not now.full(self.target):
                return True
            _fail_stale(study)
            time.sleep(self.poll_s)

    def __call__(self, study: optuna.Study, trial: FrozenTrial) -> None:
        """As a callback of ``optimize``: wait for a slot, or stop the study when it is full."""
        if not self.wait(study):
            study.stop()


def _fail_stale(study: optuna.Study) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExperimentalWarning)
        fail_stale_trials(study)


def guarded(objective: Objective, target: int, poll_s: float) -> Objective:
    """``objective`` behind the last check, inside the trial; errors become :class:`TrialError`.

    The trial runs if a slot is free counting only running and waiting trials numbered
    below it (the earlier claim wins; a later one counts this trial in turn). While a
    lower running trial holds the last slot it waits, for that trial may yet die; once
    none does and the study is full, it ends as a surplus trial (and a waiting trial that
    holds the slot is the next one a worker asks for).
    """

    def run(trial: Trial) -> float:
        while True:
            now = tally(trial.study, below=trial.number)
            if not now.full(target):
                break
            if now.running == 0:
                trial.set_user_attr(SURPLUS_ATTR, True)
                raise SurplusTrial(f"trial {trial.number}: the study already has its trials")
            _fail_stale(trial.study)
            time.sleep(poll_s)
        trial.set_user_attr(WORKER_ATTR, f"{socket.gethostname()}:{os.getpid()}")
        try:
            stopped_by = stop_requested()  # a stop between trials or while this one was asked
            if stopped_by is not None:
                raise TrainingInterrupted(f"stopped by {stopped_by} before it trained", stopped_by)
            return objective(trial)
        except optuna.TrialPruned:
            raise
        except TrainingInterrupted as err:
            _requeue(trial, err.signal_name)
            raise SweepInterrupted(
                f"trial {trial.number} stopped by {err.signal_name}; its params wait for the next "
                "worker, which continues from its last checkpoint on this machine (rerun the "
                "stage, or start a worker, to go on)"
            ) from err
        except Exception as err:
            trial.set_user_attr(ERROR_ATTR, f"{type(err).__name__}: {err}"[:2000])
            raise TrialError(f"trial {trial.number}: {type(err).__name__}: {err}") from err

    return run


def _requeue(trial: Trial, signal_name: str) -> None:
    """Hand ``trial``'s params to the next worker, as a dead worker's trial is handed on.

    The storage's own retry callback (``RetryHeartbeatStaleTrialCallback``, storage.py)
    enqueues a WAITING copy that records this trial in its system attribute
    ``failed_trial``, so the retry shows in trials.csv's ``retry_of`` like any other and
    counts against ``sweeps.max_retry``. The trial is marked ``interrupted`` (with the
    signal's name) only after the copy, which would otherwise inherit the mark.
    """
    study = trial.study
    retry = study._storage.get_heartbeat_stale_trial_callback()  # as fail_stale_trials does
    if retry is not None:
        retry(study, next(t for t in study.get_trials() if t.number == trial.number))
    trial.set_user_attr(INTERRUPTED_ATTR, signal_name)


def run_study(
    study: optuna.Study, objective: Objective, target: int, max_failed: int, poll_s: float
) -> Tally:
    """Run trials of ``study`` in this process until it holds ``target`` finished trials.

    Any number of processes may run this on one study (the journal file or an RDB; SQLite
    only for one); together they finish exactly ``target`` trials. A trial that raises is
    FAIL and the study goes on; a trial that was running in a worker that died is retried
    once its heartbeat is stale. Returns the study's final :class:`Tally`.

    Raises:
        SweepError: ``max_failed`` trials raised.
        SweepInterrupted: SIGTERM or SIGINT stopped a trial (its params are enqueued again).
    """
    gate = SlotGate(target, max_failed, poll_s)
    if gate.wait(study):  # a study that is already full (a rerun) asks for nothing
        study.optimize(
            guarded(objective, target, poll_s),
            callbacks=[MaxTrialsCallback(target, states=FINISHED), gate],
            catch=(TrialError, SurplusTrial),
            gc_after_trial=True,
        )
    return tally(study)
