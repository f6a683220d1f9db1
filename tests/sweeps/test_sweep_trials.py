"""Trials in one process on SQLite: completed, pruned, raising; W&B hygiene (PITFALLS 5, T10).

Three trials in one process, one completes, one is pruned by the median pruner from its
val/ppl curve, one raises inside training: three finished W&B offline runs, each marked
with its fate, none shared, and the study goes on to its target. The objective, training
and evaluation are the real ones, on a tiny model; the fault is a real one too (the
trial's curve file cannot be written: a folder stands where it goes).
"""

import csv
import json
import logging
import os
import signal

import lightning.pytorch as pl
import optuna
import pytest
import wandb
from optuna.trial import TrialState
from sweep_helpers import sweep_params, wandb_records

from attnlab.config import parse_params
from attnlab.data.tokens import read_tokens
from attnlab.metrics.bpb import token_byte_lengths
from attnlab.paths import write_metrics
from attnlab.sweeps import (
    Sweep,
    SweepError,
    SweepInterrupted,
    TrialObjective,
    make_pruner,
    make_sampler,
    open_storage,
    open_study,
    run_study,
    write_figures,
    write_trials,
)
from attnlab.sweeps import objective as trial_objective
from attnlab.sweeps.results import FIGURES, best_record
from attnlab.training import signals

GOOD, SLOW = 1e-2, 1e-6  # a learning rate that learns in 8 steps, and one that does not


def _read_run(run_file) -> dict:
    found = {"summary": {}, "exit_code": None}
    for record in wandb_records(run_file):
        kind = record.WhichOneof("record_type")
        if kind == "run":
            found.update(id=record.run.run_id, tags=list(record.run.tags))
        elif kind == "summary":
            for item in record.summary.update:
                found["summary"][item.key or "/".join(item.nested_key)] = json.loads(
                    item.value_json
                )
        elif kind == "exit":
            found["exit_code"] = record.exit.exit_code
    return found


@pytest.fixture
def study_with_lr(tmp_path, sweep_tokens):
    """Study dk with the learning rate searched too, on SQLite under tmp_path."""
    raw = sweep_params(trials=3, steps=8)
    raw["sweeps"]["studies"]["dk"]["space"]["lr"] = {
        "type": "float", "low": 1e-6, "high": 1e-1, "log": True,
    }  # fmt: skip
    raw["sweeps"]["studies"]["dk"]["references"] = []  # the test enqueues its own trials
    sweep = Sweep("dk", parse_params(raw))
    storage = open_storage(f"sqlite:///{tmp_path / 'dk.db'}", 1, 3, 2)
    study = open_study(
        storage,
        sweep.name,
        make_sampler(sweep.study.sampler, 0),
        make_pruner(sweep.study.pruner, sweep.pruner_warmup_steps),
        sweep.definition(sweep_tokens / "train.parquet", sweep_tokens / "val.parquet"),
        replace_other=True,
    )
    return sweep, study


def test_complete_pruned_failed_make_three_finished_runs_and_the_study_goes_on(
    monkeypatch, tmp_path, sweep_tokens, study_with_lr
):
    monkeypatch.setenv("WANDB_MODE", "offline")
    sweep, study = study_with_lr
    for lr in (GOOD, SLOW, GOOD, GOOD):
        study.enqueue_trial({"d_head": 32, "scale_scores": True, "lr": lr})
    runs = tmp_path / "runs"
    # Trial 2's val/ppl curve cannot be written: training raises after its run started.
    (runs / "sweeps" / sweep.name / "trial-2" / "val_ppl.csv").mkdir(parents=True)
    val = sweep_tokens / "val.parquet"
    objective = TrialObjective(
        sweep, sweep_tokens / "train.parquet", read_tokens(val),
        runs, tmp_path / "wandb", token_byte_lengths(sweep_tokens / "tokenizer.json", val),
    )  # fmt: skip

    tally = run_study(study, objective, target=3, max_failed=3, poll_s=1)

    trials = study.get_trials()
    states = [t.state for t in trials]
    assert states == [TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL, TrialState.COMPLETE]
    assert tally.finished == 3 and tally.errors == 1 and tally.running == tally.waiting == 0
    assert "val_ppl.csv: cannot write it (Is a directory)" in trials[2].user_attrs["error"]
    pruned = trials[1]
    assert 0 < max(pruned.intermediate_values) < 8  # stopped mid-training by the pruner
    assert min(pruned.intermediate_values) == 0  # step 0 (Lightning's sanity check) too
    assert trials[0].value < trials[1].intermediate_values[max(pruned.intermediate_values)]

    assert wandb.run is None, "every run is finished"
    found = [
        _read_run(path) for path in sorted((tmp_path / "wandb").glob("wandb/offline-run-*/*.wandb"))
    ]
    by_id = {run["id"]: run for run in found}
    assert len(found) == len(by_id) == 4, "one run per trial, none reused"
    fates = {"complete": 0, "pruned": 1, "failed": 1}
    for trial in trials:
        run = by_id[trial.user_attrs["wandb_run_id"]]
        assert "sweep-dk" in run["tags"]
        state = run["summary"]["optuna/state"]
        assert run["exit_code"] == fates[state], run
        assert (
            state
            == {"COMPLETE": "complete", "PRUNED": "pruned", "FAIL": "failed"}[trial.state.name]
        )
        if state == "complete":
            assert run["summary"]["val/ppl"] == pytest.approx(trial.value)
            assert 0 < run["summary"]["val/bpb"] < 8  # bits per byte of text: at most 8

    again = run_study(study, objective, target=3, max_failed=3, poll_s=1)  # a rerun
    assert again == tally and len(study.get_trials()) == 4
    assert not list((runs / "checkpoints").iterdir()), "finished, pruned or raised: no resume"

    folder = tmp_path / "reports"
    write_trials(folder / "trials.csv", study, list(sweep.study.space))
    write_metrics(folder / "best.json", best_record(study, 3, sweep.protocol()))
    write_figures(folder / "figures", study)
    rows = list(csv.DictReader((folder / "trials.csv").open()))
    assert [r["state"] for r in rows] == ["COMPLETE", "PRUNED", "FAIL", "COMPLETE"]
    assert rows[1]["note"].startswith("pruned at step") and rows[1]["value"] == ""
    assert "cannot write it (Is a directory)" in rows[2]["note"]
    assert all(r["wandb_run_id"] and float(r["duration_s"]) > 0 for r in rows)
    best = json.loads((folder / "best.json").read_text())
    assert best["val/ppl"] == min(trials[0].value, trials[3].value)
    assert best["params"]["lr"] == GOOD and best["trials"]["PRUNED"] == 1
    spent = sum(float(r["duration_s"]) for r in rows)
    assert best["cost"]["trial_s"] == pytest.approx(spent, abs=0.1)
    assert spent <= best["cost"]["wall_s"] + 0.1  # one worker: trials one after another
    for name in FIGURES:
        assert (folder / "figures" / name).stat().st_size > 1000


def test_a_study_defined_differently_is_refused_on_a_shared_storage(tmp_path, study_with_lr):
    sweep, study = study_with_lr
    storage = open_storage(f"sqlite:///{tmp_path / 'dk.db'}", 1, 3, 2)
    sampler, pruner = optuna.samplers.RandomSampler(), optuna.pruners.NopPruner()
    with pytest.raises(SweepError, match="another definition"):
        open_study(storage, sweep.name, sampler, pruner, {"other": 1}, replace_other=False)
    again = open_study(storage, sweep.name, sampler, pruner, {"other": 1}, replace_other=True)
    assert again.user_attrs["definition"] == {"other": 1} and not again.trials


def test_a_stop_recorded_between_trials_asks_for_no_trial(monkeypatch, study_with_lr):
    # A worker signalled while it starts or waits for a slot must not draw a trial (perhaps
    # another worker's retry) only to fail it and spend one of its retries.
    _, study = study_with_lr
    # A retry waiting for the next worker:
    study.enqueue_trial({"d_head": 32, "scale_scores": True, "lr": GOOD})
    monkeypatch.setattr(signals, "_deferred", ["SIGTERM"])

    def objective(trial: optuna.Trial) -> float:
        raise AssertionError(f"trial {trial.number} was asked for after the stop")

    with pytest.raises(SweepInterrupted, match="stopped by SIGTERM between trials"):
        run_study(study, objective, target=3, max_failed=3, poll_s=1)
    assert [t.state for t in study.get_trials()] == [TrialState.WAITING]


class _SigtermAtStep(pl.Callback):
    """Sends this process SIGTERM once, as a scheduler's pre-emption would, after ``step``."""

    def __init__(self, step: int) -> None:
        self.step, self.sent = step, False

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        if trainer.global_step == self.step and not self.sent:
            self.sent = True
            os.kill(os.getpid(), signal.SIGTERM)


def test_a_stopped_trial_s_retry_continues_from_its_checkpoint_to_the_unstopped_result(
    monkeypatch, tmp_path, sweep_tokens, caplog
):
    # Before, a retry trained afresh: a sweep stopped every few hours (a batch scheduler's
    # pre-emption, a session's end) redid each stopped trial's steps from step 0.
    raw = sweep_params(trials=1, steps=8)
    raw["runtime"]["checkpoint"]["every_n_train_steps"] = 2
    sweep = Sweep("dk", parse_params(raw))
    params = {"d_head": 32, "scale_scores": True}
    runs = tmp_path / "runs"
    objective = TrialObjective(
        sweep, sweep_tokens / "train.parquet", read_tokens(sweep_tokens / "val.parquet"),
        runs, tmp_path / "wandb",
    )  # fmt: skip

    def study(name: str) -> optuna.Study:
        storage = open_storage(f"sqlite:///{tmp_path / name}.db", 1, 3, 2)  # retries on
        made = optuna.create_study(storage=storage, study_name=name)
        made.enqueue_trial(params)
        return made

    # The reference: the same params trained without a stop, in a study of their own.
    unstopped = study("unstopped")
    run_study(unstopped, objective, target=1, max_failed=1, poll_s=1)
    (reference,) = unstopped.get_trials()

    stop = _SigtermAtStep(5)  # every step validates: step 4's checkpoint stands
    train = trial_objective.train_variant
    monkeypatch.setattr(
        trial_objective, "train_variant",
        lambda *args, callbacks, **kw: train(*args, callbacks=[*callbacks, stop], **kw),
    )  # fmt: skip
    stopped_study = study("stopped")
    with pytest.raises(SweepInterrupted, match="trial 0 stopped by SIGTERM"):
        run_study(stopped_study, objective, target=1, max_failed=1, poll_s=1)
    (kept,) = (runs / "checkpoints").iterdir()  # the stopped trial's, for its retry
    assert list(kept.glob("*.ckpt")), list(kept.iterdir())

    with caplog.at_level(logging.INFO, logger="attnlab"):
        run_study(stopped_study, objective, target=1, max_failed=1, poll_s=1)
    stopped, retry = stopped_study.get_trials()
    assert stopped.state == TrialState.FAIL and retry.state == TrialState.COMPLETE
    assert "at step 4 of 8" in caplog.text, caplog.text  # resumed, not trained again
    assert retry.value == reference.value  # bit for bit: the resume is exact
    # Its curve holds the stopped trial's points too, the ones before the stop replayed.
    assert retry.intermediate_values == reference.intermediate_values
    assert not list((runs / "checkpoints").iterdir()), "a finished retry keeps no resume state"
