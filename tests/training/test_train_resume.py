"""Kill the real stage after a checkpoint, rerun it, and get the uninterrupted run bit for bit.

PITFALLS T1 (SIGKILL, and the graceful SIGTERM path) and T2 (a corrupt checkpoint named
by the stage). "Nothing lost" means: identical weights, optimiser and scheduler state,
global step and per-step loss series, no step missing or repeated in the curve, at most
one checkpoint interval of work redone. Dropout is on, so the RNG state must resume too.
The val/ppl curve has a point at every step, so each stop lands in a step that validates.
"""

import signal
import time
from pathlib import Path

import pytest
import torch
from train_helpers import (
    SEED,
    read_offline_run,
    run_folder,
    shrunk_params,
    stop_after_first_checkpoint,
)

from attnlab.runs import read_curve
from attnlab.training import load_checkpoint_file

pytestmark = pytest.mark.slow

VARIANT = "ladder-layernorm"
EVERY = 40
PARAMS = shrunk_params(
    steps=240,
    model={"dropout": 0.1},
    runtime={
        "log_every_n_steps": 25,
        "checkpoint": {"every_n_train_steps": EVERY},
        # A start that outlasts the timeout continues without W&B, and these tests read
        # W&B's files: a loaded machine must not turn that fallback into a failure.
        "wandb": {"project": "attnlab", "entity": None, "init_timeout_s": 300},
    },
    # A val/ppl point at every step (10 x 0.08 rounds to 1), in 4 batches: a stop signal
    # then always lands in a step that validates, mostly inside its validation.
    evaluate={"batch_size": 4, "curve": {"every_steps": 10, "min_every_steps": 1}},
)
OUTPUTS = (
    f"data/models/{run_folder(VARIANT)}/model.pt",
    f"reports/curves/{run_folder(VARIANT)}/train_loss.csv",
    f"reports/curves/{run_folder(VARIANT)}/val_ppl.csv",  # no point missing or repeated
)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory, train_tokens):
    from train_helpers import StageProject

    project = StageProject(tmp_path_factory.mktemp("a") / "project", train_tokens, PARAMS)
    done = project.run(VARIANT, "--keep-checkpoint")
    assert done.returncode == 0, done.stdout + done.stderr
    return project


def _stop_after_first_checkpoint(project, sig: int) -> str:
    return stop_after_first_checkpoint(project, VARIANT, sig, "--keep-checkpoint")


def _one_run_in_two_segments(project, rerun_stderr: str) -> tuple[dict, dict]:
    """The offline segments of the stopped run and of its rerun, checked to be one W&B run.

    The rerun's segment has the stopped run's id (the folder names it, even when W&B
    wrote none of its records) and asks W&B to resume it, so one ``wandb sync`` of both
    uploads them, in order, as one run.
    """
    # W&B names the folders by start time and run id. A SIGKILL can end W&B's service
    # before it wrote the stopped segment's file at all (PITFALLS 4), never its folder.
    stopped, rerun = sorted((project.root / "wandb" / "wandb").glob("offline-run-*"))
    assert stopped.name.split("-")[-1] == rerun.name.split("-")[-1]
    rerun_file = _written_file(rerun, rerun_stderr)
    second = read_offline_run(rerun_file, finished=False)
    assert second["id"] == rerun.name.split("-")[-1] and second["resume"]
    written = list(stopped.glob("run-*.wandb"))
    first = read_offline_run(written[0], finished=False) if written else {"config": {}}
    return {"exit_code": None, **first}, second


def _written_file(folder: Path, stage_output: str) -> Path:
    """The run file of a finished segment: W&B's service may write it after the stage exits."""
    deadline = time.monotonic() + 60
    while not (found := sorted(folder.glob("run-*.wandb"))) and time.monotonic() < deadline:
        time.sleep(0.2)
    logs = "\n".join(f"{p.name}:\n{p.read_text()}" for p in sorted(folder.glob("logs/debug*.log")))
    assert found, f"W&B wrote no run file in {folder} within 60 s\n{logs}\n{stage_output}"
    return found[0]


def _assert_same_state(a, b):
    if isinstance(a, torch.Tensor):
        assert torch.equal(a, b)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for key in a:
            _assert_same_state(a[key], b[key])
    elif isinstance(a, list | tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _assert_same_state(x, y)
    else:
        assert a == b


def _assert_same_run(a, b):
    ckpt_a = load_checkpoint_file(a.checkpoints()[0])
    ckpt_b = load_checkpoint_file(b.checkpoints()[0])
    assert ckpt_a["global_step"] == ckpt_b["global_step"] == 240
    for key in ("state_dict", "optimizer_states", "lr_schedulers"):
        _assert_same_state(ckpt_a[key], ckpt_b[key])
    for output in OUTPUTS:
        assert (a.root / output).read_bytes() == (b.root / output).read_bytes(), output
    curve = read_curve(b.root / OUTPUTS[1])
    assert [step for step, _ in curve] == list(range(240)), "a step is missing or repeated"


def test_sigkill_then_rerun_equals_the_uninterrupted_run(uninterrupted, stage_project):
    project = stage_project("b", PARAMS)
    _stop_after_first_checkpoint(project, signal.SIGKILL)
    killed_at = load_checkpoint_file(project.checkpoints()[0])["global_step"]
    assert 0 < killed_at < 240 and killed_at % EVERY == 0

    rerun = project.run(VARIANT, "--keep-checkpoint")
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert f"at step {killed_at} of 240" in rerun.stderr
    metrics = (project.root / f"reports/metrics/{run_folder(VARIANT)}/train.json").read_text()
    assert f'"resumed_from_step": {killed_at}' in metrics
    _assert_same_run(uninterrupted, project)

    # PITFALLS T5: the killed W&B run is on disk, and the rerun continues it. W&B buffers
    # an offline run's records, so a SIGKILL can lose them all (PITFALLS 4); the
    # fingerprint survives in our own files: the checkpoint folder is named after it.
    killed, resumed = _one_run_in_two_segments(project, rerun.stderr)
    assert killed["exit_code"] is None and resumed["exit_code"] == 0
    fingerprint = resumed["config"]["fingerprint"]
    assert killed["config"].get("fingerprint") in (None, fingerprint)
    assert project.checkpoints()[0].parent.name == f"{VARIANT}-seed-{SEED}-{fingerprint}"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])  # SIGINT: dvc queue kill
def test_a_stop_signal_saves_at_the_step_boundary_and_the_rerun_is_identical(
    uninterrupted, stage_project, sig
):
    project = stage_project(f"c-{sig.name}", PARAMS)
    output = _stop_after_first_checkpoint(project, sig)
    assert f"stopped by {sig.name} at step" in output and "Traceback" not in output
    saved_at = load_checkpoint_file(project.checkpoints()[0])["global_step"]

    rerun = project.run(VARIANT, "--keep-checkpoint")
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    # A stop inside a step's validation keeps the checkpoint before it: the rerun scores
    # that step's point again instead of skipping it (val_ppl.csv lost it before).
    _assert_same_run(uninterrupted, project)
    assert f"last.ckpt at step {saved_at}\n" in output  # where the rerun resumed
    stopped, resumed = _one_run_in_two_segments(project, rerun.stderr)
    assert stopped["exit_code"] == 1 and resumed["exit_code"] == 0  # both on disk, whole


def test_the_stage_names_a_corrupt_checkpoint_and_writes_nothing(uninterrupted, stage_project):
    project = stage_project("d", PARAMS)
    path = (
        project.root
        / "runs"
        / uninterrupted.checkpoints()[0].relative_to(uninterrupted.root / "runs")
    )
    path.parent.mkdir(parents=True)
    path.write_bytes(uninterrupted.checkpoints()[0].read_bytes()[:5000])
    failed = project.run(VARIANT)
    assert failed.returncode == 2
    assert f"error: {path}: unreadable checkpoint" in failed.stderr
    assert "Traceback" not in failed.stderr
    assert not (project.root / "data" / "models").exists()
