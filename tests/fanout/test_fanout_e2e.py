"""The real fan-out (`attnlab repro`) against a serial `dvc repro`, at a tiny budget."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from attnlab.fanout import read_plan
from attnlab.runs import load_trained_model
from attnlab.training import load_checkpoint_file

pytestmark = pytest.mark.slow

SEED = 1337  # the first of params seeds, the one seed the tests' project keeps
# The data stages in a chain, then two trained variants at once, then one's evaluation.
TARGETS = [f"evaluate@ladder-no-context-{SEED}", f"train@ladder-mlp-{SEED}"]
STAGES = {
    "download",
    "bpe",
    "tokenize",
    f"train@ladder-no-context-{SEED}",
    f"train@ladder-mlp-{SEED}",
    f"evaluate@ladder-no-context-{SEED}",
}
TRAINED = [f"train@ladder-mlp-{SEED}", f"train@ladder-no-context-{SEED}"]
# Metrics that measure the run, not its result.
TIMINGS = {"wall_s", "tokens_per_s", "seconds", "elapsed_s"}


def _shrink(params: dict) -> None:
    params["budget"]["scale"] = 0.002
    params["model"]["d_model"] = 32
    params["train"]["batch_size"] = 8


def _attnlab(project, *args: str, one_core: bool = False) -> subprocess.Popen:
    """``attnlab repro args``, its output piped; with ``one_core``, pinned to one core.

    Pinned, its stages get one torch thread each, as ``OMP_NUM_THREADS=1`` gives a serial
    run; ``--jobs 1`` alone would give a stage every core, and another thread count sums
    floats in another order.
    """
    pinned = ["taskset", "--cpu-list", str(min(os.sched_getaffinity(0)))] if one_core else []
    return subprocess.Popen(
        [*pinned, str(Path(sys.executable).parent / "attnlab"), "repro", *args],
        cwd=project.root,
        env=project.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _fan_out(project, *args: str, one_core: bool = False) -> str:
    child = _attnlab(project, *args, one_core=one_core)
    out, _ = child.communicate(timeout=600)
    assert child.returncode == 0, out
    return out


def _without_timings(value):
    if isinstance(value, dict):
        return {k: _without_timings(v) for k, v in value.items() if k not in TIMINGS}
    return value


def _record(root: Path) -> tuple[dict, dict]:
    """dvc.lock's stages (metrics files by content, timings dropped) and every metric."""
    lock = yaml.safe_load((root / "dvc.lock").read_text())["stages"]
    metrics = {}
    for entry in lock.values():
        for out in entry.get("outs", []):
            path = root / out["path"]
            if path.suffix == ".json":
                metrics[out["path"]] = _without_timings(json.loads(path.read_text()))
                out.pop("md5"), out.pop("size")  # the file holds wall times
    return lock, metrics


def _shrunk(project):
    project.env["WANDB_MODE"] = "disabled"  # W&B has its own tests; seconds a stage here
    project.env.pop("OMP_NUM_THREADS", None)  # the fan-out sets it: one thread a job
    project.edit_params(_shrink)
    return project


@pytest.fixture
def fresh_project(dvc_project):
    """Nothing run yet: the fan-out runs the data stages too."""
    return _shrunk(dvc_project)


@pytest.fixture
def project(tokenized_project):
    """The data stages recorded: the fan-out starts with the trained stages."""
    return _shrunk(tokenized_project)


def test_the_fan_out_records_what_a_serial_repro_records_and_then_runs_nothing(fresh_project):
    project = fresh_project
    # --retrain: plain `dvc repro`'s semantics, which the serial run below has.
    out = _fan_out(project, "--retrain", "--jobs", "2", *TARGETS)
    assert "6 stages to bring up to date, 2 at once, 1 torch thread(s) each" in out
    assert out.count(": ran in ") == len(STAGES)
    fanned = _record(project.root)
    assert set(fanned[0]) == STAGES

    again = _fan_out(project, "--retrain", "--jobs", "2", *TARGETS)
    assert "0 stages to bring up to date" in again and ": ran in " not in again

    # The same targets in series, from nothing recorded (nor in DVC's run cache).
    (project.root / "dvc.lock").unlink()
    shutil.rmtree(project.root / ".dvc/cache/runs")
    serial_env = {**project.env, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "dvc", "repro", *TARGETS],
        cwd=project.root,
        env=serial_env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert set(project.ran_stages(done.stdout)) == STAGES
    assert _record(project.root) == fanned


def test_allow_missing_runs_only_what_an_edit_made_stale_where_no_model_is_kept(
    project, monkeypatch
):
    _fan_out(project, "--jobs", "2", *TARGETS)
    # A fresh clone of that record: its models neither here nor in DVC's cache.
    shutil.rmtree(project.root / "data/models")
    shutil.rmtree(project.root / ".dvc/cache")
    monkeypatch.chdir(project.root)  # DVC resolves stage names from the working directory
    assert set(read_plan(project.root, TARGETS).order) == STAGES  # plain: everything again
    out = _fan_out(project, "--allow-missing", *TARGETS)
    assert "0 stages to bring up to date" in out and ": ran in " not in out

    project.edit_params(lambda p: p["variants"]["ladder-mlp"].update(train={"lr": 0.002}))
    out = _fan_out(project, "--allow-missing", "--jobs", "2", *TARGETS)
    assert "1 stages to bring up to date" in out, out
    assert f"train@ladder-mlp-{SEED}: ran in " in out and "ladder-no-context" not in out
    trained = load_trained_model(project.root / f"data/models/ladder-mlp/seed-{SEED}")
    assert trained.train["lr"] == 0.002


def _wait_for(condition, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def _long_run(params: dict) -> None:
    # 3000 steps of 8 x 32 tokens: tens of seconds, while a stage that starts later
    # than the other by a lock wait reaches its first checkpoint within a second.
    params["budget"]["scale"] = 1.0
    params["model"]["block_size"] = 32
    params["runtime"]["checkpoint"]["every_n_train_steps"] = 20


def _stop_at_two_checkpoints(project, checkpoints: Path, *args: str) -> str:
    """``attnlab repro args`` stopped by SIGTERM once two runs saved their state."""
    launcher = _attnlab(project, *args)
    _wait_for(lambda: len(list(checkpoints.glob("*/last.ckpt"))) == 2, 300, "two checkpoints")
    launcher.send_signal(signal.SIGTERM)
    out, _ = launcher.communicate(timeout=120)
    assert launcher.returncode == 128 + signal.SIGTERM, out
    return out


def test_a_stopped_fan_out_saves_every_running_stage_and_a_rerun_resumes_it(project, tmp_path):
    project.edit_params(_long_run)
    checkpoints = tmp_path / "runs" / "checkpoints"
    out = _stop_at_two_checkpoints(project, checkpoints, "--jobs", "2", *TRAINED)
    assert "SIGTERM: stopping 2 running stage(s)" in out
    assert (
        f"train@ladder-mlp-{SEED}"
        not in (yaml.safe_load((project.root / "dvc.lock").read_text()))["stages"]
    )
    # Every stage saved at the step SIGTERM reached (after its last periodic checkpoint).
    saved = {
        path.parent.name.split(f"-seed-{SEED}-")[0]: load_checkpoint_file(path)["global_step"]
        for path in checkpoints.glob("*/last.ckpt")
    }
    assert set(saved) == {"ladder-mlp", "ladder-no-context"}
    assert all(0 < step < 3000 for step in saved.values())
    running = subprocess.run(["pgrep", "-f", "pipeline/train.py"], capture_output=True)
    assert str(project.root) not in running.stdout.decode()  # no orphan keeps training

    out = _fan_out(project, "--jobs", "2", *TRAINED)
    assert out.count(": ran in ") == 2
    for variant, step in saved.items():
        metrics = json.loads(
            (project.root / f"reports/metrics/{variant}/seed-{SEED}/train.json").read_text()
        )
        assert metrics["resumed_from_step"] == step and metrics["steps"] == 3000
    assert not list(checkpoints.glob("*/last.ckpt"))  # finished runs clean up


def test_stages_that_find_dvc_locks_taken_wait_or_retry_and_both_finish(project):
    from zc.lockfile import LockFile

    # Another process holds DVC's repository lock while both stages start ...
    (project.root / ".dvc/tmp").mkdir(exist_ok=True)
    repo_lock = LockFile(str(project.root / ".dvc/tmp/lock"))
    # ... and a live process reads one stage's output: DVC's status may read it too, but
    # the stage cannot write it until the reader is gone.
    # (Started through a shell that exits, so that init reaps it: a zombie child of this
    # test would look alive to DVC forever.)
    holder = int(subprocess.check_output(["sh", "-c", "sleep 300 >/dev/null & echo $!"]))
    models = project.root / f"data/models/ladder-mlp/seed-{SEED}"
    rwlock = project.root / ".dvc/tmp/rwlock"
    rwlock.write_text(json.dumps({"read": {str(models): [{"pid": holder, "cmd": "sleep"}]}}))
    launcher = _attnlab(project, "--jobs", "2", *TRAINED)
    time.sleep(5)
    repo_lock.close()
    log = project.root / f".dvc/tmp/attnlab-repro/train@ladder-mlp-{SEED}.log"
    blocked = "is busy, it is being blocked by"
    try:
        # The reader goes away once the stage has lost the race for its output's lock.
        _wait_for(lambda: log.exists() and blocked in log.read_text(), 300, "a busy lock")
    finally:
        os.kill(holder, signal.SIGTERM)
    out, _ = launcher.communicate(timeout=300)
    assert launcher.returncode == 0, out
    assert out.count(": ran in ") == 2
    assert blocked in log.read_text()  # it lost the race, and was retried
    lock = yaml.safe_load((project.root / "dvc.lock").read_text())["stages"]
    assert {f"train@ladder-mlp-{SEED}", f"train@ladder-no-context-{SEED}"} <= set(lock)


def test_set_params_run_as_an_experiment_that_dvc_exp_show_lists(project):
    params = (project.root / "params.yaml").read_bytes()
    lock = (project.root / "dvc.lock").read_bytes()
    for bad, says in (
        ("train.lrr=0.1", "not in struct (did you mean train.lr?)"),  # DVC's check: no key
        ("train.lr=-1", "train.lr"),  # attnlab's loader: named, before any stage
    ):
        child = _attnlab(project, "-S", bad, f"train@ladder-mlp-{SEED}")
        out, _ = child.communicate(timeout=120)
        assert child.returncode == 2 and out.startswith("error: ") and says in out, out
        assert (project.root / "params.yaml").read_bytes() == params
        assert (project.root / "dvc.lock").read_bytes() == lock  # nothing ran

    out = _fan_out(
        project,
        "-S",
        "+variants.ladder-mlp.train.lr=0.00002",  # DVC writes 2e-05, a YAML 1.2 float
        "-n",
        "lr-2e-5",
        f"train@ladder-mlp-{SEED}",
    )
    assert "saved experiment lr-2e-5" in out
    shown = json.loads(project.dvc("exp", "show", "--json").stdout)
    experiments = {
        exp["name"]: exp["data"]
        for baseline in shown
        for run in baseline.get("experiments") or []
        for exp in run["revs"]
    }
    saved = experiments["lr-2e-5"]["params"]["params.yaml"]["data"]
    assert saved["variants"]["ladder-mlp"]["train"]["lr"] == 0.00002
    trained = load_trained_model(project.root / f"data/models/ladder-mlp/seed-{SEED}")
    assert trained.train["lr"] == 0.00002
    assert trained.config["dvc_experiment"] == "lr-2e-5"


GROUP_SEEDS = (SEED, SEED + 1, SEED + 2)


def _train_stages(seeds) -> list[str]:
    return [f"train@ladder-mlp-{seed}" for seed in seeds]


def _entries(root: Path, stages: list[str]) -> tuple[dict, dict]:
    """The stages' dvc.lock entries and metrics, as _record reads them (seed groups aside)."""
    lock, metrics = _record(root)
    for values in metrics.values():
        values.pop("group_seeds", None)  # which seeds shared the process: the one difference
    return {stage: lock[stage] for stage in stages}, metrics


def test_seeds_stopped_alone_resume_alone_where_they_would_otherwise_group(project, tmp_path):
    # Two places: the two seeds start alone. One place: new, they would train as one
    # group, which has its own resume folder: each must resume its own state instead.
    seeds, steps = GROUP_SEEDS[:2], 1500

    def two_seeds_half_as_long(params: dict) -> None:
        _long_run(params)
        params["seeds"] = list(seeds)
        params["budget"]["scale"] = 0.5  # the rerun trains the two one after the other

    project.edit_params(two_seeds_half_as_long)
    checkpoints = tmp_path / "runs" / "checkpoints"
    _stop_at_two_checkpoints(project, checkpoints, "--jobs", "2", *_train_stages(seeds))
    saved = {
        int(path.parent.name.split("-seed-")[1].split("-")[0]): load_checkpoint_file(path)[
            "global_step"
        ]
        for path in checkpoints.glob("*/last.ckpt")
    }
    assert set(saved) == set(seeds) and all(0 < step < steps for step in saved.values())

    out = _fan_out(project, "--jobs", "1", *_train_stages(seeds[::-1]))
    assert out.count(": ran in ") == 2 and "other seed(s)" not in out, out
    for seed, step in saved.items():
        metrics = json.loads(
            (project.root / f"reports/metrics/ladder-mlp/seed-{seed}/train.json").read_text()
        )
        assert metrics["resumed_from_step"] == step and metrics["steps"] == steps


def test_a_seed_group_records_what_serial_stages_record_and_a_new_seed_trains_alone(project):
    project.edit_params(lambda params: params.update(seeds=list(GROUP_SEEDS)))
    evaluated = [f"evaluate@ladder-mlp-{seed}" for seed in GROUP_SEEDS]
    stages = [*_train_stages(GROUP_SEEDS), *evaluated]
    # One place: the three seeds train as one group, on one thread as the serial runs do,
    # then their evaluations run as another group (one after the other, recorded at once).
    out = _fan_out(project, *evaluated, one_core=True)
    assert "6 stages to bring up to date" in out
    assert out.count(": ran in ") == 6 and out.count("(with 2 other seed(s))") == 6, out
    grouped = _entries(project.root, stages)
    again = _fan_out(project, "--jobs", "1", *evaluated)
    assert "0 stages to bring up to date" in again and ": ran in " not in again

    # The same stages, each alone, as plain `dvc repro` runs them.
    serial_env = {**project.env, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    for stage in stages:
        done = subprocess.run(
            [sys.executable, "-m", "dvc", "repro", "--force", "--single-item", stage],
            cwd=project.root,
            env=serial_env,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stdout + done.stderr
    serial = _entries(project.root, stages)
    # Entry for entry: command, deps, params, and every output with its hash (the model,
    # the curves: trained bit for bit as alone), metrics files by content.
    assert grouped == serial

    # A fourth seed (one of neither seeds nor extra_seeds): only its run trains.
    new = SEED + 100
    project.edit_params(lambda params: params.update(seeds=[*GROUP_SEEDS, new]))
    out = _fan_out(project, "--jobs", "1", *_train_stages([*GROUP_SEEDS, new]))
    assert "1 stages to bring up to date" in out
    assert f"train@ladder-mlp-{new}: ran in " in out and out.count(": ran in ") == 1
