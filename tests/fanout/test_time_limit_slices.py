"""A catalogue advanced in slices of compute, carried from machine to machine by git alone.

A ``--time-limit`` run at a tiny budget stops mid-catalogue; what it finished is
committed (``dvc.lock``, ``reports/``, the sweep's journal); a fresh clone, with no DVC
cache and another run root (no checkpoints), continues with the same command. It ends
with the lock entries and metrics of one uninterrupted run, and the sweep keeps every
trial the first slice finished.
"""

import subprocess
import sys
from pathlib import Path

import optuna
import pytest
import yaml
from optuna.storages.journal import JournalFileBackend, JournalStorage
from optuna.trial import TrialState
from test_fanout_e2e import _record, _shrink

pytestmark = pytest.mark.slow

SEED = 1337
VARIANTS = ("ladder-mlp", "ladder-no-context")
TARGETS = [*(f"evaluate@{variant}-{SEED}" for variant in VARIANTS), "sweep@dk"]
RUNS = {f"{family}@{v}-{SEED}" for family in ("train", "evaluate") for v in VARIANTS}
SLICE_S = 60  # the first slice: a few of the sweep's trials, not all of them
TRIALS = 40  # more than a minute of trials on a quiet machine, so the slice stops mid-sweep
JOBS = "3"  # the sweep starts beside the two trainings (one thread each, as with two jobs)
SAVED = ["dvc.lock", "reports", "data/sweeps"]  # what a slice leaves for git


def _params(params: dict) -> None:
    _shrink(params)  # every training a few steps
    params["evaluate"]["curve"].update(every_steps=500, min_every_steps=1)  # a point a step
    params["variants"]["dk-128-scaled"]["train"]["batch_size"] = 8
    params["sweeps"]["workers"] = 1  # reproducible trial by trial
    study = params["sweeps"]["studies"]["dk"]
    study.update(trials=TRIALS, budget=1.0)
    study["sampler"].update(n_startup_trials=2)
    study["pruner"].update(n_startup_trials=1, warmup_steps=0)


def _repro(project, *args: str) -> subprocess.CompletedProcess[str]:
    attnlab = str(Path(sys.executable).parent / "attnlab")
    done = project.run(attnlab, "repro", "--jobs", JOBS, *args, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def _finished_trials(root: Path) -> list[tuple]:
    """Each finished trial of the sweep's journal: number, state, params and value."""
    journal = root / "data/sweeps/dk.journal"
    if not journal.exists():
        return []
    storage = JournalStorage(JournalFileBackend(str(journal)))
    study = optuna.load_study(study_name="sweep-dk", storage=storage)
    finished = study.get_trials(states=(TrialState.COMPLETE, TrialState.PRUNED))
    return [(t.number, t.state, sorted(t.params.items()), t.value) for t in finished]


def _lock(root: Path) -> dict:
    return yaml.safe_load((root / "dvc.lock").read_text())["stages"]


def _runs_only(record: tuple[dict, dict]) -> tuple[dict, dict]:
    lock, metrics = record
    kept = {name: entry for name, entry in lock.items() if name in RUNS}
    paths = {out["path"] for entry in kept.values() for out in entry.get("outs", [])}
    return kept, {path: value for path, value in metrics.items() if path in paths}


def test_a_slice_stops_mid_catalogue_and_a_fresh_clone_continues_to_the_same_record(
    tokenized_project, tmp_path
):
    project = tokenized_project
    project.env["WANDB_MODE"] = "disabled"  # W&B has its own tests
    project.env.pop("OMP_NUM_THREADS", None)
    project.edit_params(_params)

    # The reference: one uninterrupted run, in a clone of the same commit.
    reference = project.clone(tmp_path / "reference")
    _repro(reference, *TARGETS)

    first = _repro(project, "--time-limit", f"{SLICE_S}s", *TARGETS).stdout
    assert "stages current" in first and "the same command continues" in first, first
    planned = set(_lock(reference.root)) - set(_lock(project.root))
    assert planned, f"the first slice finished everything: {first}"
    print(first)  # shown when the test fails
    project.run("git", "add", *(path for path in SAVED if (project.root / path).exists()))
    project.run("git", "commit", "-qm", "the first slice")
    journal = project.root / "data/sweeps/dk.journal"
    sliced_trials = _finished_trials(project.root)
    assert sliced_trials and "sweep@dk" not in _lock(project.root), first  # stopped mid-way
    journal_lines = journal.read_text().splitlines()

    # Another machine: git only (no DVC cache, no models, no checkpoints, no run root).
    clone = project.clone(tmp_path / "machine-2" / "project")
    clone.env = {**project.env, "ATTNLAB_RUN_ROOT": str(tmp_path / "machine-2" / "runs")}
    assert not (clone.root / "data/models").exists()
    # The sweep's progress came along, in git.
    assert (clone.root / "data/sweeps/dk.journal").read_text().splitlines() == journal_lines
    out = _repro(clone, "--time-limit", "1h", *TARGETS).stdout
    assert "stages current" not in out, out  # nothing left
    assert set(_lock(clone.root)) == set(_lock(reference.root))
    assert _runs_only(_record(clone.root)) == _runs_only(_record(reference.root))

    # The sweep: every trial finished in the first slice is kept, under its number, and
    # the study has all its trials.
    finished = _finished_trials(clone.root)
    assert len(finished) == TRIALS
    assert all(trial in finished for trial in sliced_trials), (sliced_trials, finished)
    continued = (clone.root / "data/sweeps/dk.journal").read_text().splitlines()
    assert continued[: len(journal_lines)] == journal_lines  # appended to, never restarted
