"""The fan-out's forecast from a record's costs, and its closing W&B line."""

import json
import shlex
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from attnlab.config import load_params
from attnlab.fanout.costs import FIXED_S, RecordedCosts, catalogue_costs
from attnlab.fanout.forecast import Forecast, calibrate, schedule
from attnlab.fanout.wandb_runs import offline_runs, sync_line
from attnlab.training.job import TrainJob
from attnlab.training.tracking import run_location

ROOT = Path(__file__).resolve().parents[2]


def _train_json(
    root: Path,
    variant: str,
    seed: int,
    wall_s: float,
    device: str = "cpu",
    kernels: str = "mkl-default",
    resumed_from_step: int = 0,
) -> None:
    path = root / "reports/metrics" / variant / f"seed-{seed}" / "train.json"
    path.parent.mkdir(parents=True)
    record = {
        "wall_s": wall_s,
        "steps": 100,
        "resumed_from_step": resumed_from_step,
        "device": device,
        "kernels": {"step": "eager", "fp32_matmul": kernels},
    }
    path.write_text(json.dumps(record))


def test_a_training_costs_its_recorded_step_time_on_this_kind_of_device_times_its_steps(
    tmp_path,
):
    _train_json(tmp_path, "ladder-mlp", 1337, 200.0, "cpu")  # 2 s a step on the CPU
    _train_json(tmp_path, "ladder-mlp", 1338, 220.0, "cpu")
    _train_json(tmp_path, "ladder-mlp", 1339, 5.0, "cuda (NVIDIA H200)")
    params = load_params(ROOT / "params.yaml")
    steps = TrainJob.from_params(params, "ladder-mlp", 1337).steps
    cpu = catalogue_costs(params, RecordedCosts(tmp_path, "cpu"))
    assert cpu.of("train@ladder-mlp-1337") == pytest.approx(2.1 * steps + FIXED_S)
    gpu = catalogue_costs(params, RecordedCosts(tmp_path, "cuda"))
    assert gpu.of("train@ladder-mlp-1337") == pytest.approx(0.05 * steps + FIXED_S)
    assert "ladder-average" in cpu.unrecorded
    assert cpu.of("report") == FIXED_S  # a stage that trains nothing: its process alone


def test_a_step_is_priced_by_runs_on_this_machine_s_kernels_and_trained_from_step_0(tmp_path):
    params = load_params(ROOT / "params.yaml")
    steps = TrainJob.from_params(params, "ladder-mlp", 1337).steps
    _train_json(tmp_path, "ladder-mlp", 1337, 100.0, kernels="mkl-avx512")  # 1 s a step
    _train_json(tmp_path, "ladder-mlp", 1338, 300.0)  # 3 s a step on the AVX2 kernels
    _train_json(tmp_path, "ladder-mlp", 1339, 90.0, resumed_from_step=90)  # 9 s: a restart
    here = catalogue_costs(params, RecordedCosts(tmp_path, "cpu", "mkl-default"))
    assert here.of("train@ladder-mlp-1337") == pytest.approx(3.0 * steps + FIXED_S)
    assert here.other_kernels == []
    avx512 = catalogue_costs(params, RecordedCosts(tmp_path, "cpu", "mkl-avx512"))
    assert avx512.of("train@ladder-mlp-1337") == pytest.approx(1.0 * steps + FIXED_S)
    # No run on this machine's kernels: the others price it, and the forecast says so.
    only = catalogue_costs(params, RecordedCosts(tmp_path, "cpu", "no-mkl"))
    assert only.of("train@ladder-mlp-1337") == pytest.approx(2.0 * steps + FIXED_S)
    assert only.other_kernels == ["ladder-mlp"]


def test_a_variant_never_recorded_borrows_its_twin_s_step_and_a_stopped_run_costs_its_rest(
    tmp_path,
):
    _train_json(tmp_path, "dk-1024-scaled", 1337, 200.0)  # 2 s a step
    params = load_params(ROOT / "params.yaml")
    steps = TrainJob.from_params(params, "dk-1024-scaled-lr3e-3", 1337).steps
    done = {("dk-1024-scaled-lr3e-3", 1338): steps // 4}
    costs = catalogue_costs(params, RecordedCosts(tmp_path, "cpu"), done)
    # Its twin trains the same model on the same batches, at another learning rate.
    assert costs.borrowed["dk-1024-scaled-lr3e-3"] == "dk-1024-scaled"
    assert costs.of("train@dk-1024-scaled-lr3e-3-1337") == pytest.approx(2.0 * steps + FIXED_S)
    rest = steps - steps // 4
    assert costs.of("train@dk-1024-scaled-lr3e-3-1338") == pytest.approx(2.0 * rest + FIXED_S)
    assert "dk-1024-unscaled-lr3e-3" in costs.unrecorded  # its twin is not recorded either


def test_the_schedule_respects_waits_and_the_time_left_shrinks_as_stages_run():
    seconds = {"a": 100.0, "b": 100.0, "c": 50.0}
    needs = {"c": ["a"]}
    assert schedule(seconds, needs, jobs=2) == 150.0  # a and b at once, then c
    assert schedule(seconds, needs, jobs=1) == 250.0
    forecast = Forecast(seconds, needs, jobs=2, basis="test")
    assert forecast.wall_s == 150.0
    assert forecast.time_left(["a", "b", "c"], {"a": 60.0, "b": 60.0}) == 90.0
    assert forecast.time_left(["c"], {}) == 50.0


def test_calibration_measures_a_speed_and_leaves_torch_threads_as_they_were():
    threads = torch.get_num_threads()
    assert calibrate(budget_s=0.05) > 0.1  # GFLOP/s: any CPU of this century
    assert torch.get_num_threads() == threads


def test_the_closing_line_counts_every_offline_run_the_logs_name_once(tmp_path):
    def location(folder: str) -> str:
        run = SimpleNamespace(
            id="x", url=None, settings=SimpleNamespace(mode="offline", sync_dir=folder)
        )
        return run_location(run)

    first, second = tmp_path / "a.log", tmp_path / "b.log"
    first.write_text(f"training\n{location('/runs/wandb/offline-run-1')}\ndone\n")
    second.write_text(f"{location('/runs/wandb/offline-run-2')}\n")
    folders = offline_runs([first, second, first, tmp_path / "absent.log"])
    assert folders == ["/runs/wandb/offline-run-1", "/runs/wandb/offline-run-2"]
    assert sync_line(folders) == (
        "W&B: 2 offline run(s) written; upload them all with: "
        "wandb sync /runs/wandb/offline-run-1 /runs/wandb/offline-run-2"
    )
    assert sync_line([]) is None


def test_the_upload_commands_quote_a_run_root_that_holds_a_space(tmp_path):
    # Before, `wandb sync` was printed with the folders unquoted: pasted into a shell, a
    # run root "my runs" uploaded "my" and "runs/...", neither of them a run.
    wandb_dir = tmp_path / "my runs" / "wandb"
    segments = [wandb_dir / f"offline-run-2026010{i}_000000-x" for i in (1, 2)]
    for segment in segments:  # one run trained in two processes (a resume): two segments
        segment.mkdir(parents=True)
    run = SimpleNamespace(
        id="x", url=None, settings=SimpleNamespace(mode="offline", sync_dir=str(segments[1]))
    )
    log = tmp_path / "train.log"
    log.write_text(f"{run_location(run)}\n")
    own = log.read_text().split("upload it with: ", 1)[1]
    assert shlex.split(own) == ["wandb", "sync", *map(str, segments)]
    folders = offline_runs([log])
    assert folders == [str(s) for s in segments]
    fan_out = sync_line(folders).split("upload them all with: ", 1)[1]
    assert shlex.split(fan_out) == ["wandb", "sync", *map(str, segments)]
    # Pasted into a shell as printed, wandb takes every folder (it refuses a path that
    # does not exist); --dry-run uploads nothing.
    wandb = shlex.quote(str(Path(sys.executable).parent / "wandb"))
    for printed in (own, fan_out):
        pasted = printed.strip().replace("wandb sync", f"{wandb} sync --dry-run", 1)
        done = subprocess.run(["bash", "-c", pasted], capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
