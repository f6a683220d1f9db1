"""One trainer per configuration: an orphaned stage blocks its rerun; curves are whole.

Before, ``dvc repro -s train@<v>`` SIGKILLed mid-run left its stage training as an orphan;
rerun at once, a second trainer resumed beside it, both appended to ``val_ppl.csv``, and
the duplicated steps were recorded in ``dvc.lock`` as up to date.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import lightning.pytorch as pl
import pytest
from train_helpers import SEED, shrunk_params

from attnlab.data.tokens import read_tokens
from attnlab.metrics import ValidationCurve, sample_windows

pytestmark = pytest.mark.slow

VARIANT = "ladder-mlp"
STAGE = f"train@{VARIANT}-{SEED}"


def _wait_for(predicate, what: str, process: subprocess.Popen, timeout_s: float = 300) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert process.poll() is None, f"ended before {what}"
        assert time.monotonic() < deadline, f"no {what} within {timeout_s} s"
        time.sleep(0.05)


def _stages_in(root: Path) -> list[int]:
    """The pids of train stage processes whose working directory is ``root``.

    The script must be an argument of its own: a shell that runs the stage's command
    without exec (``sh -c "python pipeline/train.py ..."``) is not a trainer.
    """
    pids = []
    for proc in Path("/proc").iterdir():
        try:
            arguments = (proc / "cmdline").read_bytes().split(b"\0")
            here = os.readlink(proc / "cwd")
        except (OSError, ValueError):
            continue
        if b"pipeline/train.py" in arguments and Path(here) == root:
            pids.append(int(proc.name))
    return pids


def test_a_rerun_beside_an_orphaned_trainer_is_refused_naming_it(tokenized_project, tmp_path):
    dvc_project = tokenized_project  # the data stages recorded, so `repro -s` can train
    dvc_project.env["OMP_NUM_THREADS"] = "1"
    dvc_project.env["WANDB_MODE"] = "disabled"

    def shrink(params: dict) -> None:
        params.update(shrunk_params(steps=3000, runtime={"checkpoint": {"every_n_train_steps": 5}}))

    dvc_project.edit_params(shrink)
    repro = [sys.executable, "-m", "dvc", "repro", "-s", STAGE]
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    first = subprocess.Popen(repro, cwd=dvc_project.root, env=dvc_project.env, **quiet)
    checkpoints = tmp_path / "runs" / "checkpoints"
    _wait_for(lambda: list(checkpoints.glob("*/last.ckpt")), "first checkpoint", first)
    first.kill()  # dvc dies; its stage goes on as an orphan
    first.wait()
    (orphan,) = _stages_in(dvc_project.root)
    try:
        rerun = subprocess.run(
            repro, cwd=dvc_project.root, env=dvc_project.env, capture_output=True, text=True,
            timeout=120,  # a rerun that trains beside the orphan takes far longer
        )  # fmt: skip
        assert rerun.returncode != 0
        output = rerun.stdout + rerun.stderr
        assert "another trainer of this configuration is running" in output
        assert f"pid {orphan} on " in output
        lock_file = (dvc_project.root / "dvc.lock").read_text()
        assert STAGE not in lock_file, "the refused stage was recorded as done"
    finally:
        for pid in _stages_in(dvc_project.root):
            os.kill(pid, signal.SIGKILL)


def test_the_lock_names_its_holder_and_is_gone_once_released(tmp_path):
    from attnlab.training.lock import RunLocked, exclusive_run, lock_path

    folder = tmp_path / "checkpoints" / "ladder-mlp-0123456789abcdef"
    with exclusive_run(folder):
        assert f"pid {os.getpid()} on " in lock_path(folder).read_text()
        with pytest.raises(RunLocked, match=f"{folder}: another trainer"), exclusive_run(folder):
            pass
    assert not lock_path(folder).exists()
    with exclusive_run(folder):  # free again
        pass


class _ForeignRows(pl.Callback):
    """Another writer of the same curve (an orphan) appending a row mid-run."""

    def __init__(self, path) -> None:
        self.path = path

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        if trainer.global_step == 3:
            with self.path.open("a", encoding="utf-8") as f:
                f.write("999,1.0\n")


def test_the_validation_curve_is_rewritten_whole_at_every_point(
    train_in_process, train_tokens, tmp_path
):
    path = tmp_path / "val_ppl.csv"
    val = read_tokens(train_tokens.with_name("val.parquet"))
    curve = ValidationCurve(sample_windows(val, 32, 4, 0), 2, path, 4)
    train_in_process(shrunk_params(steps=8), VARIANT, curve=curve, callbacks=[_ForeignRows(path)])
    rows = path.read_text(encoding="utf-8").splitlines()
    assert rows == ["step,val/ppl"] + [f"{step},{ppl!r}" for step, ppl in curve.points]
    assert [step for step, _ in curve.points] == [0, 2, 4, 6, 8]
