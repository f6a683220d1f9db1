"""`attnlab repro --executor slurm` against the local fan-out, on a real single-node cluster."""

import json
import re
import shutil
import statistics
import subprocess
from pathlib import Path

import pytest
import yaml
from slurm_helpers import attnlab_command, start_launcher, wait_for

pytestmark = pytest.mark.slow

SEEDS = (1337, 1338)
VARIANTS = ("ladder-mlp", "ladder-no-context")
WINOGRAD = ("leaky-average", "closed-two-blocks")  # winograd.yaml keeps one variant per task
# Two variants x two seeds with their evaluations, and one Winograd seed group.
TARGETS = [
    *(f"evaluate@{variant}-{seed}" for variant in VARIANTS for seed in SEEDS),
    *(f"winograd-train@{WINOGRAD[0]}-{seed}" for seed in SEEDS),
]
TIMINGS = {"wall_s", "tokens_per_s", "seconds", "elapsed_s"}  # they measure the run
SUBMITTED = re.compile(r"^attnlab: submitted at ([\d.]+) as SLURM job (\d+)$", re.M)
STARTED = re.compile(r"^attnlab: job (\d+) started at ([\d.]+)", re.M)


def _two_seeds_and_a_small_winograd(params: dict) -> None:
    params["seeds"] = list(SEEDS)
    winograd = params["winograd"]
    winograd["model"]["d_model"] = 16
    winograd["train"]["steps"] = 20
    winograd["variants"] = {name: winograd["variants"][name] for name in WINOGRAD}
    params["extra_seeds"].update(seeds=[], variants=[], winograd_variants=[])


def _repro(root: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [*attnlab_command(), *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _without(value, keys: set[str]):
    if isinstance(value, dict):
        return {k: _without(v, keys) for k, v in value.items() if k not in keys}
    return value


def _record(root) -> tuple[dict, dict]:
    """dvc.lock's stages (metrics files by content, timings dropped) and every metric."""
    lock = yaml.safe_load((root / "dvc.lock").read_text())["stages"]
    metrics = {}
    for entry in lock.values():
        for out in entry.get("outs", []):
            path = root / out["path"]
            if path.suffix == ".json":
                # group_seeds says which seeds shared a process: the fan-outs group differently
                metrics[out["path"]] = _without(
                    json.loads(path.read_text()), TIMINGS | {"group_seeds"}
                )
                out.pop("md5"), out.pop("size")  # the file holds wall times
    return lock, metrics


def _start_up_seconds(project) -> list[float]:
    """Each job's wait from its submission to its batch command's first line."""
    waits = []
    for log in (project.root / ".dvc/tmp/attnlab-repro").glob("*.log"):
        text = log.read_text()
        submitted = {job: float(at) for at, job in SUBMITTED.findall(text)}
        waits += [float(at) - submitted[job] for job, at in STARTED.findall(text)[:1]]
    return waits


def test_the_fan_out_on_slurm_records_what_the_local_fan_out_records(
    slurm_project, cluster, tmp_path
):
    on_slurm = slurm_project
    on_slurm.edit_params(_two_seeds_and_a_small_winograd)
    # The same commit (the runs record it) in a second work tree, for the local fan-out.
    local = tmp_path / "local"
    shutil.copytree(on_slurm.root, local, symlinks=True, ignore=shutil.ignore_patterns("tmp"))
    local_env = {**on_slurm.env, "ATTNLAB_RUN_ROOT": str(tmp_path / "local-runs")}

    # Two jobs at a time, as two places locally: the same units (seed groups) either way.
    out = _repro(on_slurm.root, on_slurm.env, "--executor", "slurm", "--jobs", "2", *TARGETS)
    assert out.count(": ran in ") == 11, out  # winograd-data (an absent input) first
    assert cluster.squeue() == []
    waits = _start_up_seconds(on_slurm)
    assert len(waits) >= 5, waits
    print(f"submit -> start, {len(waits)} jobs: median {statistics.median(waits):.2f} s")

    _repro(local, local_env, "--jobs", "2", *TARGETS)
    (slurm_lock, slurm_metrics), (local_lock, local_metrics) = map(_record, (on_slurm.root, local))
    assert set(slurm_lock) == set(local_lock) >= set(TARGETS)
    # Entry for entry: command, deps, params, every output and its hash, metrics by content.
    for stage, entry in slurm_lock.items():
        assert entry == local_lock[stage], stage
    for path, values in slurm_metrics.items():
        assert values == local_metrics[path], path


def _three_thousand_steps(params: dict) -> None:
    # 3000 steps of 8 x 32 tokens on one thread (20 s or more), a checkpoint every 20 steps.
    params["budget"]["scale"] = 1.0
    params["model"]["block_size"] = 32
    params["runtime"]["checkpoint"]["every_n_train_steps"] = 20


def _running_job(cluster, checkpoints: Path) -> str | None:
    """The one running job's id, once its stage has saved a checkpoint."""
    running = [line.split()[0] for line in cluster.squeue() if line.split()[1] == "RUNNING"]
    return running[0] if running and list(checkpoints.glob("*/last.ckpt")) else None


def test_a_job_warned_of_its_time_limit_is_requeued_and_trains_what_an_uninterrupted_run_trains(
    slurm_project, cluster
):
    project = slurm_project
    project.edit_params(_three_thousand_steps)
    stage = f"train@ladder-mlp-{SEEDS[0]}"
    checkpoints = project.root.parent / "runs/checkpoints"
    launcher = start_launcher(project, stage)
    # SLURM's warning before a job's limit is SIGUSR1 to its batch shell (the job's
    # --signal=B:USR1@..., test_slurm_options). When it comes hangs on the controller's
    # 30 s checks and on how fast a machine trains: a fast one finished before it. So the
    # test sends that same signal through SLURM, once the stage is part-way.
    job = wait_for(lambda: _running_job(cluster, checkpoints), "a checkpoint of a running job")
    project.run("scancel", "--batch", "--signal=USR1", job)
    out, _ = launcher.communicate(timeout=900)
    assert launcher.returncode == 0 and f"{stage}: ran in " in out, out
    assert cluster.squeue() == []
    log = (project.root / f".dvc/tmp/attnlab-repro/{stage}.log").read_text()
    assert "time limit near: stopped at a checkpoint, requeueing" in log, log
    assert f"job {job} started at" in log and "(requeued 1 time(s))" in log, log
    metrics_path = project.root / f"reports/metrics/ladder-mlp/seed-{SEEDS[0]}/train.json"
    resumed = json.loads(metrics_path.read_text())
    assert 0 < resumed["resumed_from_step"] < resumed["steps"] == 3000
    requeued = yaml.safe_load((project.root / "dvc.lock").read_text())["stages"][stage]

    # The same stage uninterrupted, as plain `dvc repro` runs it on one thread.
    project.run("env", "OMP_NUM_THREADS=1", "MKL_NUM_THREADS=1", "python", "-m", "dvc",
                "repro", "--force", "--single-item", stage)  # fmt: skip
    alone = yaml.safe_load((project.root / "dvc.lock").read_text())["stages"][stage]
    outs = {out["path"]: out for out in alone["outs"]}
    for out in requeued["outs"]:
        if out["path"].endswith(".json"):
            continue  # the metrics hold wall times and where the run resumed
        assert out == outs[out["path"]], out["path"]  # the model and the curves, bit for bit
    uninterrupted = json.loads(metrics_path.read_text())
    keys = TIMINGS | {"resumed_from_step"}
    assert _without(resumed, keys) == _without(uninterrupted, keys)
    assert not list((project.root.parent / "runs/checkpoints").glob("*/last.ckpt"))
