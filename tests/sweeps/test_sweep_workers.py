"""Workers on one study in a real PostgreSQL server: exact counts, a killed worker (T7, T8).

Each worker is the real ``attnlab sweep worker dk`` in its own process, training the real
(tiny) model; the server is Debian's PostgreSQL on loopback (see postgres.py). "Nothing
lost" means: exactly the target number of finished trials, numbered without gaps or
repeats, every COMPLETE trial with its value, none left RUNNING or WAITING, and a trial
whose worker was SIGKILLed failed by its heartbeat and retried with the same params; a
worker sent SIGTERM or SIGINT stops at once, and the trial it stopped is retried with its
params.
"""

import json
import signal
from wsgiref.util import setup_testing_defaults

import optuna_dashboard
import pytest
from optuna.trial import TrialState
from sweep_helpers import finish, load, sweep_params, wait_for

from attnlab.sweeps import INTERRUPTED_ATTR, WORKER_ATTR, trial_rows


def _dashboard_trials(url: str, study_name: str) -> list[dict]:
    """The trials optuna-dashboard's API serves for the study (its WSGI app, no server)."""
    app = optuna_dashboard.wsgi(url)

    def get(path: str) -> dict:
        environ = {"PATH_INFO": path, "REQUEST_METHOD": "GET"}
        setup_testing_defaults(environ)
        return json.loads(b"".join(app(environ, lambda status, headers, exc_info=None: None)))

    studies = {s["study_name"]: s["study_id"] for s in get("/api/studies")["study_summaries"]}
    return get(f"/api/studies/{studies[study_name]}")["trials"]


def test_two_workers_finish_exactly_the_target_with_unique_numbers(sweep_project, pg_database):
    project = sweep_project("two", sweep_params(trials=6, steps=8))
    start = ("sweep", "worker", "dk")
    workers = [project.start(*start, ATTNLAB_OPTUNA_STORAGE=pg_database) for _ in range(2)]
    outputs = [finish(worker) for worker in workers]

    study = load(pg_database)
    trials = study.get_trials()
    finished = [t for t in trials if t.state in (TrialState.COMPLETE, TrialState.PRUNED)]
    assert len(finished) == 6, [(t.number, t.state) for t in trials]
    assert sorted(t.number for t in trials) == list(range(len(trials)))
    assert all(t.state != TrialState.FAIL or t.user_attrs.get("surplus") for t in trials)
    assert all(t.value is not None for t in trials if t.state == TrialState.COMPLETE)
    assert len({t.user_attrs[WORKER_ATTR] for t in finished}) == 2, outputs  # both worked
    assert all("6 trials finished" in out for out in outputs)
    assert len(_dashboard_trials(pg_database, "sweep-dk")) == len(trials)


def _unpruned_project(sweep_project, name: str):
    """Trials long enough to be stopped mid-way; no pruning, so a retry must complete."""
    params = sweep_params(trials=3, steps=30)
    params["runtime"]["sweeps"].update(heartbeat_interval_s=1, grace_period_s=3)
    params["sweeps"]["studies"]["dk"]["pruner"]["n_startup_trials"] = 1000
    return sweep_project(name, params)


def _training(url: str) -> bool:
    """Whether a running trial has reported a point after step 0."""
    study = load(url)
    running = study.get_trials(states=(TrialState.RUNNING,)) if study else []
    return any(len(t.intermediate_values) >= 2 for t in running)


def test_a_killed_worker_s_trial_fails_by_heartbeat_and_its_retry_completes(
    sweep_project, pg_database
):
    project = _unpruned_project(sweep_project, "kill")
    first = project.start("sweep", "worker", "dk", ATTNLAB_OPTUNA_STORAGE=pg_database)
    wait_for(lambda: _training(pg_database), timeout=180)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=30)
    killed = load(pg_database).get_trials(states=(TrialState.RUNNING,))[0]

    second = project.start("sweep", "worker", "dk", ATTNLAB_OPTUNA_STORAGE=pg_database)
    finish(second)

    trials = {t.number: t for t in load(pg_database).get_trials()}
    assert trials[killed.number].state == TrialState.FAIL
    retries = [t for t in trials.values() if t.system_attrs.get("failed_trial") == killed.number]
    assert len(retries) == 1
    assert retries[0].state == TrialState.COMPLETE and retries[0].params == killed.params
    states = [t.state for t in trials.values()]
    assert states.count(TrialState.COMPLETE) == 3 and states.count(TrialState.FAIL) == 1
    assert TrialState.RUNNING not in states and TrialState.WAITING not in states
    assert [t["state"] for t in _dashboard_trials(pg_database, "sweep-dk")].count("Fail") == 1


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])  # SIGINT: dvc queue kill
def test_a_stopped_worker_stops_and_the_next_one_retries_its_trial(sweep_project, pg_database, sig):
    project = _unpruned_project(sweep_project, f"stop-{sig.name}")
    first = project.start("sweep", "worker", "dk", ATTNLAB_OPTUNA_STORAGE=pg_database)
    wait_for(lambda: _training(pg_database), timeout=180)
    # The signal goes at once: on a loaded machine another look at the study can take
    # longer than the worker's remaining trials. The stopped trial is read afterwards.
    first.send_signal(sig)
    output, _ = first.communicate(timeout=60)  # the worker stops; it starts no other trial

    assert first.returncode == 2, output
    trials = {t.number: t for t in load(pg_database).get_trials()}
    (stopped,) = [t for t in trials.values() if INTERRUPTED_ATTR in t.user_attrs]
    assert f"trial {stopped.number} stopped by {sig.name}" in output
    assert "which continues from its last checkpoint" in output
    assert trials[stopped.number].state == TrialState.FAIL
    assert trials[stopped.number].user_attrs[INTERRUPTED_ATTR] == sig.name
    assert max(trials) == stopped.number + 1  # only the retry was added after it
    retry = trials[stopped.number + 1]
    assert retry.state == TrialState.WAITING
    assert retry.system_attrs["failed_trial"] == stopped.number  # as a heartbeat retry records
    assert retry.params == stopped.params and INTERRUPTED_ATTR not in retry.user_attrs

    finish(project.start("sweep", "worker", "dk", ATTNLAB_OPTUNA_STORAGE=pg_database))
    trials = {t.number: t for t in load(pg_database).get_trials()}
    assert trials[retry.number].state == TrialState.COMPLETE
    assert trials[retry.number].params == stopped.params
    states = [t.state for t in trials.values()]
    assert states.count(TrialState.COMPLETE) == 3 and states.count(TrialState.FAIL) == 1
    assert TrialState.RUNNING not in states and TrialState.WAITING not in states
    rows = {row["number"]: row for row in trial_rows(load(pg_database), ["d_head"])}
    assert rows[stopped.number]["note"].startswith(f"stopped by {sig.name}")
    assert rows[retry.number]["retry_of"] == stopped.number
