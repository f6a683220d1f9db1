"""A failed SLURM job, and a Ctrl-C of the launcher: nothing recorded wrongly, no job left."""

import signal

import pytest
import yaml
from slurm_helpers import start_launcher, wait_for

pytestmark = pytest.mark.slow

SEEDS = (1337, 1338)
TRAINED = [
    f"train@{variant}-{seed}" for variant in ("ladder-mlp", "ladder-no-context") for seed in SEEDS
]


def _changed(project) -> list[str]:
    """The paths `git status` lists (new, deleted, modified or untracked)."""
    status = project.run("git", "status", "--porcelain", "--untracked-files=all").stdout
    return [line[3:] for line in status.splitlines()]


def test_a_failed_job_is_reported_with_its_log_and_its_outputs_are_put_back(slurm_project, cluster):
    project = slurm_project
    tokens = sorted((project.root / "data/tokens").iterdir())
    before = {path.name: path.read_bytes() for path in tokens}
    # The stage fails half-way, having written part of its outputs.
    (project.root / "pipeline/tokenize_corpus.py").write_text(
        "from pathlib import Path\n"
        "Path('data/tokens').mkdir()\n"
        "Path('data/tokens/train.parquet').write_text('half')\n"
        "print('the tokenizer gave up')\n"
        "raise SystemExit(3)\n"
    )
    project.run("git", "commit", "-qam", "a tokenize stage that fails")
    launcher = start_launcher(project, "tokenize")
    out, _ = launcher.communicate(timeout=300)
    assert launcher.returncode == 1, out
    assert "tokenize: FAILED (exit 255), log: " in out, out  # DVC's status, as a local child's
    assert "the tokenizer gave up" in out  # the log's tail
    assert "from DVC's cache: data/tokens" in out, out
    assert _changed(project) == []
    assert {path.name: path.read_bytes() for path in tokens} == before
    assert cluster.squeue() == []


def test_ctrl_c_cancels_queued_jobs_stops_running_ones_and_records_nothing(slurm_project, cluster):
    def long_runs(params: dict) -> None:
        params["seeds"] = list(SEEDS)
        params["budget"]["scale"] = 1.0  # 3000 steps: minutes, far past the Ctrl-C
        params["model"]["block_size"] = 32
        params["runtime"]["checkpoint"]["every_n_train_steps"] = 20

    project = slurm_project
    project.edit_params(long_runs)
    lock_before = (project.root / "dvc.lock").read_bytes()
    checkpoints = project.root.parent / "runs" / "checkpoints"
    # Four jobs on two CPUs: two train while two wait in the queue.
    launcher = start_launcher(project, "--no-seed-groups", "--jobs", "4", *TRAINED)
    wait_for(lambda: len(list(checkpoints.glob("*/last.ckpt"))) == 2, "two checkpoints")
    states = sorted(line.split()[1] for line in cluster.squeue())
    assert states == ["PENDING", "PENDING", "RUNNING", "RUNNING"], states
    launcher.send_signal(signal.SIGINT)
    out, _ = launcher.communicate(timeout=300)
    assert launcher.returncode == 128 + signal.SIGINT, out
    assert "SIGINT: stopping 4 running stage(s)" in out, out
    assert ": ran in " not in out and "FAILED" not in out, out
    assert cluster.squeue() == []  # the waiting jobs cancelled, the running ones ended
    assert (project.root / "dvc.lock").read_bytes() == lock_before
    assert not set(TRAINED) & set(yaml.safe_load(lock_before)["stages"])
    assert _changed(project) == []
    # The two that ran stopped at a step with their checkpoint, for the next run.
    assert len(list(checkpoints.glob("*/last.ckpt"))) == 2
