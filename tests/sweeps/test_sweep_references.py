"""A study's reference trials: its first trials, enqueued once however many workers start.

The references are params ``sweeps.studies.<study>.references`` (the story's own choices).
"Once" means: exactly one trial of the study has a reference's params, it is trial 0 when
the stage created the study, it counts toward ``trials``, and a rerun (or another worker
joining) enqueues nothing. The studies are real Optuna studies in the embedded journal
file or a real PostgreSQL database; the stage is the real ``pipeline/sweep.py`` training
the real tiny model.
"""

import subprocess
import sys
import threading

import optuna
import pytest
from optuna.storages.journal import JournalFileBackend, JournalStorage
from optuna.trial import TrialState
from sweep_helpers import sweep_params

from attnlab.config import parse_params
from attnlab.data.tokens import read_tokens
from attnlab.sweeps import (
    Sweep,
    TrialObjective,
    open_storage,
    open_study,
    run_study,
    storage_url,
)

FINISHED = (TrialState.COMPLETE, TrialState.PRUNED)
REFERENCE = {"d_head": 32, "scale_scores": True}  # params.yaml's, kept by sweep_params
OPENERS = 4


def _enqueued(trials: list[optuna.trial.FrozenTrial]) -> list[tuple[int, dict]]:
    """The trials enqueued with fixed params (a sampled trial may land on a reference too)."""
    return [
        (t.number, t.system_attrs["fixed_params"])
        for t in trials
        if "fixed_params" in t.system_attrs
    ]


def _open(sweep: Sweep, url: str, tokens) -> optuna.Study:
    return sweep.open(url, 1337, tokens / "train.parquet", tokens / "val.parquet")


def test_the_reference_is_trial_0_a_rerun_adds_nothing_and_a_new_one_starts_afresh(
    tmp_path, sweep_tokens
):
    params = sweep_params(trials=3, steps=8, workers=1)
    sweep = Sweep("dk", parse_params(params))
    url = storage_url(None, tmp_path / "dk.journal")
    study = _open(sweep, url, sweep_tokens)
    _open(sweep, url, sweep_tokens)  # the stage's own worker opens it again: nothing new
    (waiting,) = study.get_trials()
    assert waiting.state == TrialState.WAITING and waiting.system_attrs["fixed_params"] == REFERENCE

    objective = TrialObjective(
        sweep, sweep_tokens / "train.parquet", read_tokens(sweep_tokens / "val.parquet"),
        tmp_path / "runs", tmp_path / "wandb",
    )  # fmt: skip
    tally = run_study(study, objective, target=3, max_failed=1, poll_s=1)
    trials = study.get_trials()
    assert tally.finished == 3 and len(trials) == 3  # the reference counts toward trials
    assert trials[0].params == REFERENCE and trials[0].state in FINISHED
    assert _enqueued(trials) == [(0, REFERENCE)]

    again = _open(sweep, url, sweep_tokens)  # a rerun of the stage
    run_study(again, objective, target=3, max_failed=1, poll_s=1)
    assert [t.params for t in again.get_trials()] == [t.params for t in trials]

    # A changed reference is another study: the old trials are not mixed with it.
    moved = {"d_head": 48, "scale_scores": False}
    params["sweeps"]["studies"]["dk"]["references"] = [moved]
    changed = Sweep("dk", parse_params(params))
    paths = (sweep_tokens / "train.parquet", sweep_tokens / "val.parquet")
    assert changed.definition(*paths) != sweep.definition(*paths)
    fresh = _open(changed, url, sweep_tokens)
    (first,) = fresh.get_trials()
    assert first.number == 0 and first.system_attrs["fixed_params"] == moved


def _open_at_once(url: str, ready: threading.Barrier, opened: list[int]) -> None:
    """One of several openers of the same new study at the same instant, with its own storage.

    Each opener has a storage of its own (its own journal replay, its own database
    connection), as a worker process has; what decides who creates the study is the file
    lock or the database, not the interpreter.
    """
    storage = open_storage(url, 60, 180, 0)
    ready.wait()
    study = open_study(
        storage, "s", optuna.samplers.RandomSampler(), optuna.pruners.NopPruner(),
        {"space": "x"}, replace_other=False, references=[{"x": 3}, {"x": 5}],
    )  # fmt: skip
    opened.append(len(study.get_trials()))


@pytest.mark.parametrize("backend", ["journal", "postgresql"])
def test_workers_opening_a_new_study_at_once_enqueue_each_reference_once(
    backend, tmp_path, request
):
    url = (
        request.getfixturevalue("pg_database")
        if backend == "postgresql"
        else storage_url(None, tmp_path / "s.journal")
    )
    ready, opened = threading.Barrier(OPENERS), []
    openers = [
        threading.Thread(target=_open_at_once, args=(url, ready, opened)) for _ in range(OPENERS)
    ]
    for opener in openers:
        opener.start()
    for opener in openers:
        opener.join(timeout=120)
    assert opened == [2] * OPENERS  # each returned only once both references were enqueued

    study = optuna.load_study(study_name="s", storage=open_storage(url, 60, 180, 0))
    assert _enqueued(study.get_trials()) == [(0, {"x": 3}), (1, {"x": 5})]


def test_two_local_workers_run_the_reference_once_and_finish_exactly_the_target(sweep_project):
    project = sweep_project("two-local-reference", sweep_params(trials=4, steps=8, workers=2))
    script = project.root / "pipeline" / "sweep.py"

    def stage() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, str(script), "--study", "dk"],
            cwd=project.root, env=project.env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip

    done = stage()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 trials finished by 2 worker(s)" in done.stdout, done.stdout
    journal = JournalStorage(JournalFileBackend(str(project.root / "data/sweeps/dk.journal")))
    trials = optuna.load_study(study_name="sweep-dk", storage=journal).get_trials()
    assert len([t for t in trials if t.state in FINISHED]) == 4
    assert _enqueued(trials) == [(0, REFERENCE)]  # once, by the stage, before its workers
    assert trials[0].params == REFERENCE and trials[0].state in FINISHED

    again = stage()
    assert again.returncode == 0, again.stdout + again.stderr
    rerun = optuna.load_study(study_name="sweep-dk", storage=journal).get_trials()
    assert [(t.number, t.params) for t in rerun] == [(t.number, t.params) for t in trials]
