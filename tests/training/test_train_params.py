"""Bad training params fail before any work, naming the key (PITFALLS T4)."""

import time
from pathlib import Path

import pytest
from train_helpers import shrunk_params

from attnlab.config import parse_params
from attnlab.config.files import params_files
from attnlab.errors import ParamsError


def _edit(path: str, value) -> dict:
    params = shrunk_params()
    *parents, last = path.split(".")
    node = params
    for part in parents:
        node = node.setdefault(part, {})
    node[last] = value
    return params


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        ("train.warmup_steps", 5000, "warmup_steps (5000) must not exceed steps (3000)"),
        ("train.lr", 0, "train.lr: Input should be greater than 0"),
        ("variants.norm-pre.train.lr", -1.0, "variants.norm-pre.train.lr: Input should be greater"),
        ("variants.norm-pre-warmup.train.warmup_steps", 2000, "variants.norm-pre-warmup.train"),
        ("trainer.devices", 0, "trainer.devices"),
        ("trainer.strategy", "ddp_spawn", "trainer.strategy"),
        ("trainer.precision", "16", "trainer.precision"),
        ("trainer.accelerator", "tpu", "trainer.accelerator"),
        ("runtime.log_every_n_steps", "5", "runtime.log_every_n_steps"),
        ("trainer.acelerator", "cpu", "trainer.acelerator: unknown key"),
        ("runtime.checkpoint.every_n_train_steps", 0, "runtime.checkpoint.every_n_train_steps"),
        ("runtime.wandb.project", "team/attnlab", "runtime.wandb.project"),
        ("runtime.wandb.init_timeout_s", 0, "runtime.wandb.init_timeout_s"),
    ],
)
def test_a_bad_value_is_rejected_naming_its_key(path, value, expected):
    with pytest.raises(ParamsError) as caught:
        parse_params(_edit(path, value))
    assert expected in str(caught.value)


def test_a_missing_section_is_named():
    params = shrunk_params()
    del params["runtime"]
    with pytest.raises(ParamsError, match="runtime: required key is missing"):
        parse_params(params)


# What the stage project holds before a stage runs: its data and the params files.
PROJECT_FILES = sorted(["data", *(path.name for path in params_files(Path("params.yaml")))])


def test_the_stage_fails_fast_with_exit_2_and_touches_nothing(stage_project):
    project = stage_project("bad", _edit("variants.ladder-mlp.train", {"lr": 0}))
    began = time.monotonic()
    failed = project.run("ladder-mlp")
    assert time.monotonic() - began < 60
    assert failed.returncode == 2
    assert "variants.ladder-mlp.train.lr: Input should be greater than 0" in failed.stderr
    assert "Traceback" not in failed.stderr
    assert sorted(p.name for p in project.root.iterdir()) == PROJECT_FILES


def test_an_unknown_variant_is_named(stage_project):
    failed = stage_project("unknown", shrunk_params()).run("ladder-nope")
    assert failed.returncode == 2
    assert "variants.ladder-nope: no such variant" in failed.stderr


def test_an_alias_trains_nothing_and_names_the_run_it_reads(stage_project):
    project = stage_project("alias", shrunk_params())
    failed = project.run("depth-1")
    assert failed.returncode == 2
    assert "variants.depth-1: an alias of ladder-layernorm (aliases.depth-1)" in failed.stderr
    assert sorted(p.name for p in project.root.iterdir()) == PROJECT_FILES


def test_a_batch_that_does_not_split_across_processes_is_refused(train_in_process):
    params = shrunk_params(trainer={"devices": 3, "strategy": "ddp"}, train={"batch_size": 8})
    with pytest.raises(ParamsError, match="batch_size: 8 windows do not split evenly across 3"):
        train_in_process(params, "ladder-mlp")
