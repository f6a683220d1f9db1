"""Several workers of one study on one machine, sharing the embedded journal (PITFALLS 9, T8).

The stage is the real ``pipeline/sweep.py`` (what ``dvc.yaml`` runs) training the real tiny
model; its workers are child processes sharing ``data/sweeps/dk.journal``. "Nothing lost or
duplicated" means: exactly the target number of finished trials, numbered without gaps
or repeats, none left RUNNING or WAITING, and trials run by both workers; after a SIGTERM,
every stopped trial's params wait for the rerun, which finishes them.
"""

import signal
import subprocess
import sys
import time

import optuna
from optuna.storages import RetryHeartbeatStaleTrialCallback, fail_stale_trials
from optuna.storages.journal import JournalFileBackend, JournalStorage
from optuna.trial import TrialState
from sweep_helpers import sweep_params, wait_for

from attnlab.config.files import write_params_mapping
from attnlab.sweeps import INTERRUPTED_ATTR, WORKER_ATTR, WorkerJob, local_workers, worker_jobs
from attnlab.sweeps.journal import HEARTBEAT_ATTR, HeartbeatJournalStorage

FINISHED = (TrialState.COMPLETE, TrialState.PRUNED)


def _stage(project, study: str = "dk") -> subprocess.CompletedProcess[str]:
    script = project.root / "pipeline" / "sweep.py"
    return subprocess.run(
        [sys.executable, str(script), "--study", study],
        cwd=project.root,
        env=project.env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_two_workers_of_the_stage_finish_exactly_the_target_in_one_journal(sweep_project):
    project = sweep_project("two-local", sweep_params(trials=6, steps=8, workers=2))
    done = _stage(project)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "6 trials finished by 2 worker(s)" in done.stdout, done.stdout

    journal = project.root / "data" / "sweeps" / "dk.journal"
    study = optuna.load_study(
        study_name="sweep-dk", storage=JournalStorage(JournalFileBackend(str(journal)))
    )
    trials = study.get_trials()
    finished = [t for t in trials if t.state in FINISHED]
    assert len(finished) == 6, [(t.number, t.state) for t in trials]
    assert sorted(t.number for t in trials) == list(range(len(trials)))
    assert all(t.state != TrialState.FAIL or t.user_attrs.get("surplus") for t in trials)
    assert len({t.user_attrs[WORKER_ATTR] for t in finished}) == 2  # both workers ran trials

    again = _stage(project)  # a full study asks for nothing
    assert again.returncode == 0 and len(study.get_trials()) == len(trials), again.stderr


def _journal_study(project) -> optuna.Study | None:
    journal = project.root / "data" / "sweeps" / "dk.journal"
    if not journal.exists():
        return None
    storage = JournalStorage(JournalFileBackend(str(journal)))
    try:
        return optuna.load_study(study_name="sweep-dk", storage=storage)
    except KeyError:
        return None


def _training(project) -> list[optuna.trial.FrozenTrial]:
    """The trials running with at least two validation points: their worker is mid-trial."""
    study = _journal_study(project)
    running = study.get_trials(states=(TrialState.RUNNING,)) if study else []
    return [t for t in running if len(t.intermediate_values) >= 2]


def test_a_sigterm_stops_every_worker_and_a_rerun_finishes_their_trials(sweep_project):
    params = sweep_params(trials=3, steps=30, workers=2)
    params["sweeps"]["studies"]["dk"]["pruner"]["n_startup_trials"] = 1000  # none pruned
    project = sweep_project("term-local", params)
    script = project.root / "pipeline" / "sweep.py"
    stage = subprocess.Popen(
        [sys.executable, str(script), "--study", "dk"],
        cwd=project.root,
        env=project.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    # Signal as soon as one trial trains. Under load the other worker may still be starting,
    # or between trials: it must stop too, and whichever trials ran are read afterwards.
    wait_for(lambda: _training(project) or stage.poll() is not None, timeout=180)
    assert stage.poll() is None, stage.communicate()[0]  # it ended before any trial trained
    seen = {t.number for t in _training(project)}
    stage.send_signal(signal.SIGTERM)
    output, _ = stage.communicate(timeout=120)

    assert stage.returncode == 2 and "the sweep was stopped" in output, output
    trials = {t.number: t for t in _journal_study(project).get_trials()}
    stopped = [t for t in trials.values() if INTERRUPTED_ATTR in t.user_attrs]
    assert seen <= {t.number for t in stopped}, (seen, trials)
    assert TrialState.RUNNING not in {t.state for t in trials.values()}  # every worker stopped
    for trial in stopped:  # each stopped at a step boundary, its params waiting
        assert trial.state == TrialState.FAIL
        assert trial.user_attrs[INTERRUPTED_ATTR] == "SIGTERM"
    # Each stopped trial's params wait once. A worker that asked for a trial as the signal
    # came may have drawn another's retry and stopped it at once: one retry then stands
    # for both, its retry_history naming each.
    waiting = [t for t in trials.values() if t.state == TrialState.WAITING]
    handed_on = [n for t in waiting for n in t.system_attrs["retry_history"]]
    table = [(t.number, t.state.name, t.system_attrs, t.user_attrs) for t in trials.values()]
    assert sorted(handed_on) == sorted(t.number for t in stopped), (table, output)

    done = _stage(project)
    assert done.returncode == 0, done.stdout + done.stderr
    states = [t.state for t in _journal_study(project).get_trials()]
    assert states.count(TrialState.COMPLETE) == 3
    assert states.count(TrialState.FAIL) == len(stopped)
    assert TrialState.RUNNING not in states and TrialState.WAITING not in states


def test_a_continued_study_draws_new_points_not_the_last_run_s_again(sweep_project):
    # Before, every run of the stage seeded its sampler alike: a rerun's random startup
    # draws repeated the earlier run's, trial for trial (3 of 16 params repeated).
    params = sweep_params(trials=2, steps=4, workers=1)
    params["sweeps"]["studies"]["dk"]["sampler"]["n_startup_trials"] = 1000  # all random
    project = sweep_project("continued", params)
    assert _stage(project).returncode == 0
    params["sweeps"]["studies"]["dk"]["trials"] = 4  # more trials continue the study
    write_params_mapping(project.root / "params.yaml", params)
    done = _stage(project)
    assert done.returncode == 0, done.stdout + done.stderr

    trials = sorted(_journal_study(project).get_trials(), key=lambda t: t.number)
    drawn = [t.params for t in trials[1:]]  # trial 0 is the reference, enqueued
    assert len(drawn) == 3 and drawn[0] not in drawn[1:], drawn


def test_a_trial_silent_past_the_grace_period_is_failed_and_retried(tmp_path):
    retry = RetryHeartbeatStaleTrialCallback(max_retry=2)
    storage = HeartbeatJournalStorage(tmp_path / "s.journal", 1, 2, retry)
    study = optuna.create_study(storage=storage, study_name="s")
    silent, beating = study.ask({"x": optuna.distributions.IntDistribution(0, 9)}), study.ask()
    time.sleep(2.5)
    storage.record_heartbeat(beating._trial_id)
    fail_stale_trials(study)

    states = {t.number: t.state for t in study.get_trials()}
    assert states[silent.number] == TrialState.FAIL
    assert states[beating.number] == TrialState.RUNNING
    (waiting,) = study.get_trials(states=(TrialState.WAITING,))
    assert waiting.system_attrs["failed_trial"] == silent.number
    assert waiting.params == silent.params

    # The retry inherits the old heartbeat; once it starts, its own start counts.
    storage.set_trial_system_attr(waiting._trial_id, HEARTBEAT_ATTR, 0.0)
    resumed = study.ask()
    assert resumed.number == waiting.number
    fail_stale_trials(study)
    assert study.get_trials()[resumed.number].state == TrialState.RUNNING


def test_auto_is_one_worker_per_core_given_and_seeds_derive_from_the_study_seed(tmp_path):
    assert local_workers("auto", {"OMP_NUM_THREADS": "3"}) == 3
    assert local_workers(2, {"OMP_NUM_THREADS": "3"}) == 2
    first = WorkerJob(
        params=None,  # type: ignore[arg-type]  # not read by the scheduling
        study="dk",
        url="journal:///x",
        seed=1337,
        threads=4,
        device=None,
        train_tokens=tmp_path,
        val_tokens=tmp_path,
        run_root=tmp_path,
        wandb_folder=tmp_path,
    )
    assert worker_jobs(first, 1) == [first]  # one worker: the study's reproducible order
    jobs = worker_jobs(first, 3)
    seeds = [job.seed for job in jobs]
    assert seeds[0] == 1337 and len(set(seeds)) == 3
    assert seeds == [job.seed for job in worker_jobs(first, 3)]  # derived, not drawn
