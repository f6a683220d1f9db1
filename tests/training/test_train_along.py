"""Weights kept along training (E09, E11): the right steps, the same bytes after a resume.

The evaluate stage measures every kept step and refuses a file whose SHA-256 differs from
the manifest's, or a missing one, naming it and writing nothing; so too for the model's
own weights, checked against the model folder's manifest.

The real train stage (real Lightning) trains E11's post-norm row, cut to three blocks of
width 32, for 80 steps with dropout on, so a resumed run must also resume the RNG to write
the same weights; the real evaluate stage then measures every kept step.
"""

import hashlib
import json
import shutil
import signal

import pytest
import torch
from train_helpers import (
    PROJECT_ROOT,
    SEED,
    run_folder,
    shrunk_params,
    stop_after_first_checkpoint,
    train_here,
)

from attnlab.catalogue import protocol_variants_of
from attnlab.config import parse_params
from attnlab.evaluation.initial import build_initial_model
from attnlab.training import TrainJob
from attnlab.training.along_steps import along_steps

pytestmark = pytest.mark.slow

VARIANT = "norm-post"  # a row of E11, which measures its gradient norms along training
STEPS = 80  # norm-post's 1000 steps at 240 / 3000 of the budget
PARAMS = shrunk_params(
    steps=240, model={"dropout": 0.1}, runtime={"checkpoint": {"every_n_train_steps": 20}}
)
for _name in (VARIANT, *protocol_variants_of(VARIANT)):  # a row moves with its protocols
    PARAMS["variants"][_name]["model"]["n_layer"] = 3
# The powers of two below 1000, times 0.08, rounded (at least 1): 1, 3, 5, 10, 20, 41.
KEPT = (0, 1, 3, 5, 10, 20, 41, STEPS)


def _along(project):
    return project.root / f"data/models/{run_folder(VARIANT)}/along"


def _hashes(project) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in _along(project).iterdir()}


def test_the_schedule_scales_with_the_budget_and_only_along_experiments_keep_weights():
    cfg = parse_params(PARAMS)
    assert along_steps(TrainJob.from_params(cfg, VARIANT, SEED)) == KEPT
    full = parse_params({**PARAMS, "budget": {"scale": 1.0}})
    full_steps = along_steps(TrainJob.from_params(full, VARIANT, SEED))
    assert full_steps == (0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000)
    assert cfg.measured_along(VARIANT) == ("grad_norms",)
    assert cfg.measured_along("dk-1024-unscaled") == ("score_stats",)
    assert cfg.measured_along("norm-post-dropout10") == ("grad_norms",)  # a protocol's
    assert cfg.measured_along("ladder-mlp") == ()  # E02 measures at the end only


def test_keeping_weights_changes_nothing_the_run_trains(tmp_path, train_tokens):
    params = shrunk_params(steps=12, model={"dropout": 0.1})  # dropout: any RNG draw shows
    plain = train_here(params, "ladder-layernorm", tmp_path / "a", train_tokens, seed=SEED)
    steps = (0, 1, 2, 4, 8, 12)
    kept = train_here(
        params, "ladder-layernorm", tmp_path / "b", train_tokens, seed=SEED, along=steps
    )
    assert kept.curve == plain.curve
    final = plain.model.state_dict()
    assert all(torch.equal(v, final[k]) for k, v in kept.model.state_dict().items())
    assert sorted(p.name for p in kept.along.iterdir()) == [f"step-{s:06d}.pt" for s in steps]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory, train_tokens):
    from train_helpers import StageProject

    project = StageProject(tmp_path_factory.mktemp("a") / "project", train_tokens, PARAMS)
    done = project.run(VARIANT)
    assert done.returncode == 0, done.stdout + done.stderr
    return project


def test_the_stage_keeps_the_weights_of_every_kept_step_with_their_hashes(uninterrupted):
    folder = _along(uninterrupted)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert [entry["step"] for entry in manifest["steps"]] == list(KEPT)
    assert {p.name for p in folder.iterdir()} == {
        "manifest.json",
        *(f"step-{step:06d}.pt" for step in KEPT),
    }
    hashes = _hashes(uninterrupted)
    assert all(hashes[entry["file"]] == entry["sha256"] for entry in manifest["steps"])
    first = torch.load(folder / "step-000000.pt", weights_only=True)
    initial = build_initial_model(parse_params(PARAMS).variant(VARIANT).model, SEED).state_dict()
    assert first.keys() == initial.keys() and all(torch.equal(first[k], initial[k]) for k in first)
    last = torch.load(folder / f"step-{STEPS:06d}.pt", weights_only=True)
    final = torch.load(folder.parent / "model.pt", weights_only=True)
    assert all(torch.equal(last[k], final[k]) for k in final)
    assert not torch.equal(first["blocks.0.mixer.qkv.weight"], last["blocks.0.mixer.qkv.weight"])


def test_a_killed_and_resumed_run_keeps_the_same_files(uninterrupted, stage_project):
    project = stage_project("b", PARAMS)
    stop_after_first_checkpoint(project, VARIANT, signal.SIGKILL)
    rerun = project.run(VARIANT)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert "resuming from" in rerun.stderr
    assert _hashes(project) == _hashes(uninterrupted)


def _evaluate(project):
    import subprocess
    import sys

    command = [sys.executable, str(PROJECT_ROOT / "pipeline/evaluate.py"), "--variant", VARIANT]
    return subprocess.run(
        [*command, "--seed", str(SEED)],
        cwd=project.root,
        env=project.env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_evaluate_measures_every_kept_step_and_refuses_a_changed_file(uninterrupted):
    record_path = uninterrupted.root / f"reports/metrics/{run_folder(VARIANT)}/eval.json"
    done = _evaluate(uninterrupted)
    assert done.returncode == 0, done.stdout + done.stderr
    record = json.loads(record_path.read_text())
    along = record["along"]
    assert along["steps"] == list(KEPT)
    for prefix in ("grad_norm", "grad_norm_weights_rms"):
        for key in (*(f"{prefix}/block_{b:02d}" for b in range(3)), f"{prefix}/ratio_last_first"):
            assert len(along["metrics"][key]) == len(KEPT), key
            assert key in record  # the initialisation's field, as before
    assert "along" in record["protocol"]

    record_path.unlink()
    changed = _along(uninterrupted) / "step-000005.pt"
    data = bytearray(changed.read_bytes())
    data[-100] ^= 0x01  # one bit of the last tensor: still loads, different weights
    changed.write_bytes(bytes(data))
    refused = _evaluate(uninterrupted)
    relative = changed.relative_to(uninterrupted.root)  # the stage names it from the project
    assert refused.returncode == 2, refused.stderr
    assert f"error: {relative}: its SHA-256 differs from the one in" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert not record_path.exists()

    changed.unlink()
    missing = _evaluate(uninterrupted)
    assert missing.returncode == 2
    assert f"error: {relative}: missing (listed in" in missing.stderr
    assert not record_path.exists()


def test_evaluate_refuses_a_model_file_with_a_flipped_bit(uninterrupted, stage_project):
    # Before, it loaded and was recorded: val/ppl off in its 7th digit, or null after a
    # flipped exponent bit. A copy: the module's other tests read the trained folder.
    project = stage_project("flipped", PARAMS)
    model = project.root / f"data/models/{run_folder(VARIANT)}"
    shutil.copytree(uninterrupted.root / f"data/models/{run_folder(VARIANT)}", model)
    data = bytearray((model / "model.pt").read_bytes())
    data[len(data) * 3 // 4] ^= 0x01  # one bit deep in the tensor data: it still loads
    (model / "model.pt").write_bytes(bytes(data))
    refused = _evaluate(project)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert (
        f"error: {model.relative_to(project.root)}/model.pt: its SHA-256 differs from the one "
        f"in {model.relative_to(project.root)}/manifest.json" in refused.stderr
    )
    assert "Traceback" not in refused.stderr
    assert not (project.root / f"reports/metrics/{run_folder(VARIANT)}/eval.json").exists()
