"""Checkpoints are all-or-nothing, a bad one is named, none at all is said (PITFALLS T1, T2)."""

import logging

import pytest
import torch
from train_helpers import shrunk_params

from attnlab.training import CheckpointError
from attnlab.training.checkpoints import AtomicCheckpointIO, checkpoint_step, load_checkpoint_file

PARAMS = shrunk_params(steps=4)
VARIANT = "ladder-mlp"


def _kept_checkpoint(train_in_process, tmp_path):
    train_in_process(PARAMS, VARIANT, keep_checkpoint=True)
    (path,) = (tmp_path / "runs").glob("checkpoints/*/last.ckpt")
    return path


def test_a_kept_checkpoint_holds_everything_resume_needs(train_in_process, tmp_path):
    checkpoint = load_checkpoint_file(_kept_checkpoint(train_in_process, tmp_path))
    assert checkpoint["global_step"] == 4
    assert checkpoint["optimizer_states"] and checkpoint["lr_schedulers"]
    callbacks = checkpoint["callbacks"]
    assert [s for s, _ in callbacks["LossCurve"]["points"]] == [0, 1, 2, 3]
    assert set(callbacks["RngState"]) >= {"torch", "numpy", "python"}


def test_a_truncated_checkpoint_is_an_error_naming_the_file(train_in_process, tmp_path):
    path = _kept_checkpoint(train_in_process, tmp_path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match=str(path)):
        train_in_process(PARAMS, VARIANT)
    assert path.read_bytes() == data[: len(data) // 2], "the evidence is left in place"


def test_a_checkpoint_of_another_configuration_is_refused(train_in_process, tmp_path):
    path = _kept_checkpoint(train_in_process, tmp_path)
    with pytest.raises(CheckpointError, match="refusing to resume another run"):
        checkpoint_step(path, "0123456789abcdef")


def test_no_checkpoint_starts_clean_and_says_so(train_in_process, tmp_path, caplog):
    with caplog.at_level(logging.INFO, logger="attnlab"):
        result = train_in_process(PARAMS, VARIANT)
    assert "no checkpoint at" in caplog.text and "starting from step 0" in caplog.text
    assert result.metrics["resumed_from_step"] == 0


def test_a_finished_kept_run_resumes_at_its_end_without_training(train_in_process, tmp_path):
    first = train_in_process(PARAMS, VARIANT, keep_checkpoint=True)
    again = train_in_process(PARAMS, VARIANT, keep_checkpoint=True)
    assert again.metrics["resumed_from_step"] == 4
    assert again.curve == first.curve
    first_state, again_state = first.model.state_dict(), again.model.state_dict()
    assert all(torch.equal(first_state[key], again_state[key]) for key in first_state)


def test_a_failed_save_leaves_the_previous_checkpoint_whole_and_no_debris(tmp_path):
    io = AtomicCheckpointIO()
    path = tmp_path / "last.ckpt"
    io.save_checkpoint({"global_step": 1, "w": torch.ones(3)}, path)
    good = path.read_bytes()
    with pytest.raises(Exception):  # noqa: B017 - any failure inside torch.save
        io.save_checkpoint({"global_step": 2, "bad": lambda: None}, path)  # unpicklable
    assert path.read_bytes() == good
    assert load_checkpoint_file(path)["global_step"] == 1
    assert [p.name for p in tmp_path.iterdir()] == ["last.ckpt"]
