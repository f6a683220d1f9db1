"""Resume state is trusted only when whole, and removed only once the outputs are safe.

Before: a bit flipped inside a checkpoint tensor resumed silently to different weights; a
failed write of the model deleted the resume state first, so the rerun trained again from
step 0; a rerun resuming at the last step wrote no val_ppl.csv (DVC had deleted it); a
run resumed after a change to the curve's windows; a full disk during a save was torch's
"unexpected pos" traceback.
"""

import errno
import os
import shutil

import lightning.pytorch as pl
import optuna
import pytest
import torch
from train_helpers import run_folder, shrunk_params

from attnlab.config.files import write_params_mapping
from attnlab.errors import AttnlabError
from attnlab.training import CheckpointError
from attnlab.training.checkpoints import AtomicCheckpointIO

VARIANT = "ladder-mlp"


def test_a_bit_flipped_inside_a_tensor_is_refused_naming_the_file(train_in_process, tmp_path):
    params = shrunk_params(steps=4)
    train_in_process(params, VARIANT, keep_checkpoint=True)
    (path,) = (tmp_path / "runs").glob("checkpoints/*/last.ckpt")
    data = bytearray(path.read_bytes())
    data[len(data) * 3 // 4] ^= 0x01  # the last bit of a byte deep in the tensor data
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match=f"{path}: unreadable checkpoint"):
        train_in_process(params, VARIANT, keep_checkpoint=True)


def test_a_failed_output_write_keeps_the_resume_state_for_the_rerun(stage_project):
    project = stage_project("blocked", shrunk_params(steps=6))
    blocker = project.root / "data" / "models" / run_folder(VARIANT)
    blocker.parent.mkdir(parents=True)
    blocker.write_text("a file where the model folder goes")
    failed = project.run(VARIANT)
    assert failed.returncode == 2, failed.stdout + failed.stderr
    assert "Traceback" not in failed.stderr
    assert f"error: data/models/{run_folder(VARIANT)}: cannot write it" in failed.stderr
    assert project.checkpoints(), "the resume state went before the outputs were safe"

    curve = project.root / "reports" / "curves" / run_folder(VARIANT) / "val_ppl.csv"
    written = curve.read_bytes()  # drawn point by point during the fit
    blocker.unlink()
    shutil.rmtree(project.root / "reports")  # as dvc repro deletes the outputs first
    rerun = project.run(VARIANT)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert "at step 6 of 6" in rerun.stderr  # resumed at the end: nothing trained twice
    assert (project.root / "data" / "models" / run_folder(VARIANT) / "model.pt").is_file()
    # The resumed fit validates nothing; the curve still comes back whole (it did not).
    assert curve.read_bytes() == written
    assert not project.checkpoints(), "a finished stage leaves no resume state"


def test_a_run_stopped_before_a_curve_knob_changed_starts_afresh(stage_project):
    # Before, it resumed and kept the curve drawn at the old cadence (tests/training/
    # test_train_fingerprint.py checks every knob the stage declares).
    params = shrunk_params(steps=6)
    project = stage_project("knob", params)
    kept = project.run(VARIANT, "--keep-checkpoint")  # the resume state stays, at step 6
    assert kept.returncode == 0, kept.stdout + kept.stderr
    params["evaluate"]["curve"]["min_every_steps"] = 3  # was 1
    write_params_mapping(project.root / "params.yaml", params)
    rerun = project.run(VARIANT)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert "resuming from" not in rerun.stderr and "starting from step 0" in rerun.stderr


def test_a_full_disk_during_a_save_says_so_and_keeps_the_old_file(tmp_path, monkeypatch):
    io = AtomicCheckpointIO()
    path = tmp_path / "last.ckpt"
    io.save_checkpoint({"global_step": 1, "w": torch.ones(3)}, path)
    good = path.read_bytes()

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)  # where a full disk shows on a real filesystem
    with pytest.raises(AttnlabError, match=f"{path}: cannot write it, the disk is full"):
        io.save_checkpoint({"global_step": 2, "w": torch.zeros(3)}, path)
    assert path.read_bytes() == good
    assert [p.name for p in tmp_path.iterdir()] == ["last.ckpt"]


class _PruneAtStep3(pl.Callback):
    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        if trainer.global_step == 3:
            raise optuna.TrialPruned("pruned at step 3")


def test_a_fit_that_is_not_resumable_leaves_no_checkpoint_however_it_ends(
    train_in_process, tmp_path
):
    with pytest.raises(optuna.TrialPruned):
        train_in_process(
            shrunk_params(steps=8), VARIANT, resume=False, resumable=False,
            callbacks=[_PruneAtStep3()],
        )  # fmt: skip
    assert not list((tmp_path / "runs" / "checkpoints").iterdir())
