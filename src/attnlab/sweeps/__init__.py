"""Optuna sweeps of the head width d_k and the warmup (the Sweeps section of docs/catalogue.md).

A study is data (params ``sweeps.studies``); :class:`Sweep` resolves one, and its trials
train with the same code as the ``train`` stage (:class:`TrialObjective`). Storage is an
embedded journal file or a shared RDB (:mod:`attnlab.sweeps.storage`); any number of
workers, on one machine (:mod:`attnlab.sweeps.workers`) or many, finish exactly the
study's trial count (:func:`run_study`); the results are
``best.json``, ``trials.csv`` and Optuna's figures (:mod:`attnlab.sweeps.results`).
"""

from attnlab.sweeps.definition import Sweep, session_seed, worker_seed
from attnlab.sweeps.objective import TrialObjective, suggest
from attnlab.sweeps.results import (
    best_record,
    trial_rows,
    write_figures,
    write_snapshot,
    write_trials,
)
from attnlab.sweeps.storage import (
    STORAGE_ENV,
    StorageError,
    is_embedded,
    is_sqlite,
    open_storage,
    redact,
    storage_url,
)
from attnlab.sweeps.study import (
    ERROR_ATTR,
    INTERRUPTED_ATTR,
    SURPLUS_ATTR,
    WANDB_ATTR,
    WORKER_ATTR,
    SweepError,
    SweepInterrupted,
    Tally,
    TrialError,
    make_pruner,
    make_sampler,
    open_study,
    run_study,
    tally,
)
from attnlab.sweeps.workers import WorkerJob, local_workers, run_workers, worker_jobs

__all__ = [
    "ERROR_ATTR",
    "INTERRUPTED_ATTR",
    "STORAGE_ENV",
    "SURPLUS_ATTR",
    "WANDB_ATTR",
    "WORKER_ATTR",
    "WorkerJob",
    "StorageError",
    "Sweep",
    "SweepError",
    "SweepInterrupted",
    "Tally",
    "TrialError",
    "TrialObjective",
    "best_record",
    "is_embedded",
    "is_sqlite",
    "local_workers",
    "make_pruner",
    "make_sampler",
    "open_storage",
    "open_study",
    "redact",
    "run_study",
    "run_workers",
    "session_seed",
    "storage_url",
    "suggest",
    "tally",
    "trial_rows",
    "write_figures",
    "write_snapshot",
    "worker_jobs",
    "worker_seed",
    "write_trials",
]
