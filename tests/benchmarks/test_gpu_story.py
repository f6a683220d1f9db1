"""The GPU story's dry run, end to end: the real fan-out on the CPU, its figures, its tarball.

``benchmarks/gpu_story.py --dry-run`` takes the path of the real run (scratch repository,
params set as ``-S`` sets them, ``attnlab repro --retrain``, figures, tarball) at budget.scale
0.002 on the CPU. The whole catalogue (105 stages at one seed) took 37 minutes on two busy
cores, so the test brings up one language model and one Winograd model and what they need.
"""

import json
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.slow

SEED = 1337  # the one seed the tests' project keeps
FIGURES = (
    "tokens/s",
    "TFLOP/s",
    "wall_s",
    "total training FLOP (6·N·D): ",
    "aggregate TFLOP/s over the fan-out's wall",
    "fraction of peak: ",
    "(peak ",
    "mean GPU utilisation: n/a (no GPU: the run is on the CPU)",
    "wall time total: ",
)


def _member(tar: tarfile.TarFile, name: str) -> bytes:
    return tar.extractfile(f"gpu_story/{name}").read()


def test_the_dry_run_prints_every_figure_and_packs_the_record(dvc_project, tmp_path):
    winograd = yaml.safe_load((dvc_project.root / "winograd.yaml").read_text())["winograd"]
    variant = winograd["maps"]["variant"]
    targets = [f"train@ladder-mlp-{SEED}", f"winograd-train@{variant}-{SEED}"]
    tarball = tmp_path / "gpu_story.tar.gz"
    command = [sys.executable, "benchmarks/gpu_story.py", "--dry-run", "--jobs", "2"]
    command += ["--workdir", str(tmp_path / "story"), "--out", str(tarball)]
    out = dvc_project.run(*command, *(f"--target={target}" for target in targets)).stdout

    for figure in FIGURES:
        assert figure in out, figure
    groups = {line.split()[0] for line in out.splitlines() if line.endswith(tuple("0123456789"))}
    assert {"train@ladder-mlp", f"winograd-train@{variant}"} <= groups, out
    assert tarball.stat().st_size < 16 * 2**20
    with tarfile.open(tarball) as tar:
        names = set(tar.getnames())
        lock = yaml.safe_load(_member(tar, "dvc.lock"))["stages"]
        summary = json.loads(_member(tar, "summary.json"))
        records = [
            json.loads(_member(tar, path))
            for path in (
                f"reports/metrics/ladder-mlp/seed-{SEED}/train.json",
                f"reports/metrics/winograd/train/{variant}/seed-{SEED}.json",
            )
        ]
    assert set(targets) <= lock.keys()
    assert f"gpu_story/.dvc/tmp/attnlab-repro/{targets[0]}.log" in names
    assert {"gpu_story/params.yaml", "gpu_story/repro.log"} <= names
    # The figures are the records' own: 6·N·D over the run's stages, nothing else counted.
    total = sum(6 * record["params"] * record["tokens_seen"] for record in records)
    assert summary["total_flop"] == pytest.approx(total)
    assert f"total training FLOP (6·N·D): {total:.4g}" in out
    assert sorted(run["stage"] for run in summary["runs"]) == sorted(targets)
    assert summary["exit_status"] == 0 and summary["gpu"] == {
        "skipped": "no GPU: the run is on the CPU"
    }
    assert "budget.scale=0.002" in summary["overrides"] and 0 < summary["peak_fraction"] < 1


def _merge(project, tarball) -> str:
    attnlab = str(Path(sys.executable).parent / "attnlab")
    return project.run(attnlab, "merge-record", str(tarball)).stdout


def test_a_time_limited_run_merges_into_a_checkout_where_its_stages_are_current(
    dvc_project, tmp_path
):
    evaluate = f"evaluate@ladder-mlp-{SEED}"
    tarball = tmp_path / "gpu_story.tar.gz"
    command = [sys.executable, "benchmarks/gpu_story.py", "--dry-run", "--jobs", "2"]
    command += ["--time-limit", "10m", f"--target={evaluate}"]
    command += ["--workdir", str(tmp_path / "story"), "--out", str(tarball)]
    out = dvc_project.run(*command).stdout
    assert "repro --time-limit 10m" in out and "--retrain" not in out, out
    with tarfile.open(tarball) as tar:
        lock = yaml.safe_load(_member(tar, "dvc.lock"))["stages"]
        summary = json.loads(_member(tar, "summary.json"))
        metrics = _member(tar, f"reports/metrics/ladder-mlp/seed-{SEED}/eval.json")
    assert {f"train@ladder-mlp-{SEED}", evaluate, "tokenize"} <= lock.keys(), lock.keys()

    # A checkout of other params (the story's budget): the trained stages are not current
    # there and are left out; the data stages, whose params the story leaves, come in.
    said = _merge(dvc_project, tarball)
    assert f"train@ladder-mlp-{SEED}" in said and evaluate in said.split("left out", 1)[1], said
    merged = yaml.safe_load((dvc_project.root / "dvc.lock").read_text())["stages"]
    assert "tokenize" in merged and evaluate not in merged
    run_metrics = dvc_project.root / f"reports/metrics/ladder-mlp/seed-{SEED}"
    assert not list(run_metrics.glob("*.json"))  # the files it brought are gone again

    # The same params as the story's run: every stage comes in, with its metrics, and
    # nothing is left to run (the models stay on the other machine, as on a clone).
    from attnlab.fanout.experiment import apply_params

    apply_params(dvc_project.root, summary["overrides"])
    dvc_project.run("git", "commit", "-qam", "the story's params")
    said = _merge(dvc_project, tarball)
    assert "left out" not in said, said
    merged = yaml.safe_load((dvc_project.root / "dvc.lock").read_text())["stages"]
    assert merged[evaluate] == lock[evaluate]
    eval_json = dvc_project.root / f"reports/metrics/ladder-mlp/seed-{SEED}/eval.json"
    assert eval_json.read_bytes() == metrics
    attnlab = str(Path(sys.executable).parent / "attnlab")
    again = dvc_project.run(attnlab, "repro", "--jobs", "2", evaluate).stdout
    ran = {
        line.split("] ", 1)[1].split(":")[0] for line in again.splitlines() if ": ran in " in line
    }
    assert "0 stages to bring up to date" in again and ran <= {"download", "bpe", "tokenize"}, again
