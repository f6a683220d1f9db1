"""W&B offline: one finished run per training, config and summary on disk (PITFALLS 4, 5, T5)."""

import logging
import subprocess
import time
from collections import defaultdict

import lightning.pytorch as pl
import numpy as np
import pytest
import wandb
from train_helpers import SEED, offline_runs, read_offline_run, shrunk_params, train_here

from attnlab.data.tokens import TokenSplit, write_split
from attnlab.training.tracking import git_revision, replica_group, resolve_mode

PARAMS = shrunk_params(steps=4)
VARIANTS = ("ladder-mlp", "dk-128-scaled", "positions-alibi")


@pytest.fixture
def offline(monkeypatch, tmp_path):
    monkeypatch.setenv("WANDB_MODE", "offline")
    return tmp_path / "wandb"


def test_three_trainings_in_one_process_make_three_finished_runs(
    offline, train_in_process, tmp_path
):
    results = [train_in_process(PARAMS, name) for name in VARIANTS]
    assert wandb.run is None, "every run is finished"
    runs = [read_offline_run(path) for path in offline_runs(offline)]
    assert len(runs) == 3
    by_name = {run["name"]: run for run in runs}
    assert set(by_name) == {f"workspace/{name}/seed-{SEED}" for name in VARIANTS}
    for name, result in zip(VARIANTS, results, strict=True):
        run = by_name[f"workspace/{name}/seed-{SEED}"]
        assert run["exit_code"] == 0
        # The group is the replicas of one configuration, not the story's experiment.
        assert run["group"] == replica_group(name, result.config) and run["group"] != name
        assert run["tags"] == [name.split("-")[0], name, f"seed-{SEED}"]
        config = run["config"]
        assert config["variant"] == name and config["steps"] == result.metrics["steps"]
        assert config["model"]["d_model"] == 32 and config["budget"] == PARAMS["budget"]
        assert config["seed"] == config["init_seed"] == config["data_seed"] == SEED
        assert config["fingerprint"] == result.config["fingerprint"]
        assert config["git_commit"] is None and config["git_dirty"] is False  # no git here
        assert run["summary"]["train/loss"] == result.metrics["train/loss"]
        assert run["summary"]["tokens_per_s"] == result.metrics["tokens_per_s"]


def test_the_run_is_named_after_the_dvc_experiment(offline, monkeypatch, train_in_process):
    monkeypatch.setenv("DVC_EXP_NAME", "brisk-lark")
    train_in_process(PARAMS, "ladder-mlp")
    (run_file,) = offline_runs(offline)
    assert read_offline_run(run_file)["name"] == f"brisk-lark/ladder-mlp/seed-{SEED}"


def test_the_seeds_of_a_variant_form_one_group_and_a_pinned_seed_another(offline, train_in_process):
    pinned = shrunk_params(steps=4)
    pinned["variants"]["ladder-mlp"]["train"] = {"data_seed": 5}
    trained = [
        (train_in_process(PARAMS, "ladder-mlp", seed=seed), seed) for seed in (SEED, SEED + 1)
    ]
    trained.append((train_in_process(pinned, "ladder-mlp", seed=SEED + 1), SEED + 1))
    runs = {
        (run["config"]["seed"], run["config"]["data_seed"]): run
        for run in map(read_offline_run, offline_runs(offline))
    }
    first, second, fixed = runs[SEED, SEED], runs[SEED + 1, SEED + 1], runs[SEED + 1, 5]
    assert first["name"] == f"workspace/ladder-mlp/seed-{SEED}"
    assert second["name"] == fixed["name"] == f"workspace/ladder-mlp/seed-{SEED + 1}"
    assert first["group"] == second["group"] != fixed["group"]
    assert first["tags"][-1] == f"seed-{SEED}" and second["tags"][-1] == f"seed-{SEED + 1}"
    assert (fixed["config"]["init_seed"], fixed["config"]["data_seed"]) == (SEED + 1, 5)
    assert len({result.config["fingerprint"] for result, _ in trained}) == 3


def test_without_a_key_the_mode_is_offline_before_init(monkeypatch, tmp_path, train_in_process):
    for name in ("WANDB_MODE", "WANDB_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NETRC", str(tmp_path / "no-netrc"))
    monkeypatch.setenv("HOME", str(tmp_path))
    assert resolve_mode() == "offline"
    began = time.monotonic()
    train_in_process(PARAMS, "ladder-mlp")
    assert time.monotonic() - began < 60, "no network wait"
    assert len(offline_runs(tmp_path / "wandb")) == 1


def test_a_netrc_entry_or_an_env_key_means_online(monkeypatch, tmp_path):
    monkeypatch.delenv("WANDB_MODE", raising=False)
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    netrc = tmp_path / "netrc"
    netrc.write_text("machine api.wandb.ai\n  login user\n  password " + "0" * 40 + "\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    assert resolve_mode() == "online"
    monkeypatch.setenv("WANDB_MODE", "dryrun")
    assert resolve_mode() == "offline"


def test_a_failing_wandb_never_fails_training(monkeypatch, tmp_path, train_in_process, caplog):
    monkeypatch.setenv("WANDB_MODE", "offline")
    (tmp_path / "wandb").write_text("a file where W&B wants a folder")
    with caplog.at_level(logging.WARNING, logger="attnlab"):
        result = train_in_process(PARAMS, "ladder-mlp")
    assert "W&B could not start" in caplog.text
    assert result.metrics["steps"] == 4


def test_a_training_that_raises_still_finishes_its_run_as_failed(offline, tmp_path):
    tokens = tmp_path / "short.parquet"
    write_split(TokenSplit("train", np.arange(10, dtype=np.uint16)), tokens, "0" * 64)
    with pytest.raises(ValueError, match="hold no window"):
        train_here(PARAMS, "ladder-mlp", tmp_path, tokens)
    assert wandb.run is None
    (run_file,) = offline_runs(offline)
    assert read_offline_run(run_file)["exit_code"] == 1


class _Crash(pl.Callback):
    """Raise at the end of step 3: after the checkpoint of step 2, before the run ends."""

    def on_train_batch_end(self, trainer: pl.Trainer, *_args) -> None:
        if trainer.global_step == 3:
            raise RuntimeError("crash")


def test_a_resumed_training_continues_its_own_run(offline, train_in_process, caplog):
    with pytest.raises(RuntimeError, match="crash"):
        train_in_process(PARAMS, "ladder-mlp", callbacks=[_Crash()])
    with caplog.at_level(logging.INFO, logger="attnlab"):
        resumed = train_in_process(PARAMS, "ladder-mlp")
    assert resumed.metrics["resumed_from_step"] == 2
    other = train_in_process(PARAMS, "ladder-mlp", seed=SEED + 1)  # another fingerprint
    restarted = train_in_process(PARAMS, "ladder-mlp", resume=False)  # from step 0
    segments = defaultdict(list)
    for run in map(read_offline_run, offline_runs(offline)):
        segments[run["id"]].append(run)
    run_id = resumed.provenance["wandb_run"]
    # One W&B run in two offline segments: the crashed one and the one that asked W&B to
    # resume it, which `wandb sync` uploads after it, into the same run.
    assert sorted(segment["exit_code"] for segment in segments[run_id]) == [0, 1]
    assert all(segment["resume"] for segment in segments[run_id] if segment["exit_code"] == 0)
    (line,) = [r.getMessage() for r in caplog.records if r.getMessage().startswith("W&B run ")]
    both = sorted(str(f.parent) for f in offline_runs(offline) if f.parent.name.endswith(run_id))
    assert line.endswith(f"upload it with: wandb sync {' '.join(both)}")
    ids = [run_id, other.provenance["wandb_run"], restarted.provenance["wandb_run"]]
    assert len(set(ids)) == 3 and len(segments) == 3


def test_replicas_share_a_group_and_other_configurations_do_not():
    config = {"model": {"d_model": 32}, "train": {"lr": 1e-3}, "steps": 4, "warmup_steps": 0}
    reseeded = {**config, "seed": 7, "trainer": {"devices": 2}}
    other = {**config, "train": {"lr": 2e-3}}
    assert replica_group("ladder-mlp", config) == replica_group("ladder-mlp", reseeded)
    assert replica_group("ladder-mlp", config) != replica_group("ladder-mlp", other)


def test_the_baseline_commit_is_clean_under_dvc_exp_run(monkeypatch, tmp_path):
    monkeypatch.setenv("DVC_EXP_BASELINE_REV", "a" * 40)
    assert git_revision(tmp_path) == {"git_commit": "a" * 40, "git_dirty": False}


def test_each_run_ends_with_one_line_saying_where_it_is(offline, train_in_process, caplog):
    with caplog.at_level(logging.INFO, logger="attnlab"):
        train_in_process(PARAMS, "ladder-mlp")
    (run_file,) = offline_runs(offline)
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("W&B run ")]
    assert len(lines) == 1
    folder = run_file.parent
    assert f"(offline) in {folder}; upload it with: wandb sync {folder}" in lines[0]
    assert read_offline_run(run_file)["id"] in lines[0]


def test_the_learning_rate_is_logged_at_every_step(offline, train_in_process):
    params = shrunk_params(steps=4)
    # Warmup over the whole budget: the learning rate rises at every step.
    params["variants"]["ladder-mlp"]["train"] = {"warmup_steps": 3000}
    train_in_process(params, "ladder-mlp")
    (run_file,) = offline_runs(offline)
    history = read_offline_run(run_file)["history"]
    rates = [row["train/lr"] for row in history if "train/lr" in row]
    assert len(rates) == 4 and rates == sorted(rates) and len(set(rates)) == 4


def test_the_pipelines_own_writes_do_not_make_the_checkout_dirty(tmp_path):
    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    for name in ("dvc.lock", "params.yaml", "reports/headline.json"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("a\n")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    (tmp_path / "dvc.lock").write_text("b\n")
    (tmp_path / "reports/headline.json").write_text("b\n")
    assert git_revision(tmp_path)["git_dirty"] is False
    (tmp_path / "params.yaml").write_text("b\n")
    assert git_revision(tmp_path)["git_dirty"] is True
