"""Held-out accuracy along training: log-spaced steps, the final score, the same weights."""

import copy
import csv
import json
from pathlib import Path

import pytest
import torch

from attnlab import paths
from attnlab.config import parse_params
from attnlab.config.files import read_params_mapping, write_params_mapping
from attnlab.stages import winograd_data, winograd_score, winograd_train
from attnlab.training import FitOptions, TrainJob, train_variant
from attnlab.winograd.accuracy_curve import AccuracyCurve, log_spaced_steps
from attnlab.winograd.from_params import build_task
from attnlab.winograd.sentence_batches import WinogradSentences
from attnlab.winograd.task_files import read_sentences, write_task

ROOT = Path(__file__).resolve().parents[2]
PARAMS = read_params_mapping(ROOT / "params.yaml")
SEED = PARAMS["seeds"][0]
VARIANTS = ("leaky-average", "closed-two-blocks")  # the maps need the second


def _tiny(dropout: float = 0.0) -> dict:
    """The real params, 16 wide, 2000 steps scaled to 12, two variants, one seed."""
    params = copy.deepcopy(PARAMS)
    params["seeds"] = [SEED]
    params["budget"]["scale"] = 12 / 2000
    params["trainer"]["accelerator"] = "cpu"
    winograd = params["winograd"]
    winograd["model"].update(d_model=16, dropout=dropout)
    winograd["variants"] = {name: winograd["variants"][name] for name in VARIANTS}
    params["extra_seeds"].update(seeds=[], variants=[], winograd_variants=[])  # its rows are cut
    return params


@pytest.mark.parametrize(
    ("last", "steps"),
    [(0, [0]), (1, [0, 1]), (2, [0, 1, 2]), (8, [0, 1, 2, 4, 8]), (12, [0, 1, 2, 4, 8, 12])],
)
def test_log_spaced_steps_double_and_end_at_the_last(last, steps):
    assert log_spaced_steps(last) == steps


def test_the_stage_writes_the_curve_ending_at_the_scored_accuracy(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ATTNLAB_RUN_ROOT", str(tmp_path / "runs"))
    monkeypatch.setenv("WANDB_MODE", "disabled")
    write_params_mapping(Path("params.yaml"), _tiny())
    winograd_data.main(Path("params.yaml"))
    for variant in VARIANTS:
        winograd_train.main(variant, SEED, Path("params.yaml"), resume=True)
        winograd_score.main(variant, SEED, Path("params.yaml"))
        with paths.winograd_accuracy_curve(variant, SEED).open(newline="") as handle:
            rows = list(csv.DictReader(handle))
        assert [int(row["step"]) for row in rows] == [0, 1, 2, 4, 8, 12]
        accuracy = [float(row["accuracy"]) for row in rows]
        assert all(0.0 <= a <= 1.0 for a in accuracy)
        score = json.loads(paths.winograd_score_metrics(variant, SEED).read_text())
        assert accuracy[-1] == score["winograd/acc"]


def _train(tmp_path: Path, name: str, measured: bool):
    loaded = parse_params(_tiny(dropout=0.1))  # dropout: the run draws random numbers
    cfg = loaded.winograd
    path = tmp_path / "closed.parquet"
    if not path.exists():
        write_task(build_task(cfg, "closed", loaded.seed), path)
    job = TrainJob.from_variant(loaded, cfg.variant(name), SEED)
    data = WinogradSentences(path, job.variant.train.batch_size, job.data_seed, job.steps)
    curve = AccuracyCurve(read_sentences(path, "held_out"), log_spaced_steps(job.steps))
    options = FitOptions(
        path, tmp_path / "runs", tmp_path / "wandb", resumable=False, live_progress=False, data=data
    )
    result = train_variant(job, options, callbacks=[curve] if measured else [])
    return result, curve


def test_measuring_changes_neither_the_weights_nor_the_loss_curve(tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "disabled")
    plain, _ = _train(tmp_path, "closed-two-blocks", measured=False)
    measured, curve = _train(tmp_path, "closed-two-blocks", measured=True)
    assert [step for step, _ in curve.points] == [0, 1, 2, 4, 8, 12]
    assert measured.curve == plain.curve
    weights, reference = measured.model.state_dict(), plain.model.state_dict()
    assert weights.keys() == reference.keys()
    assert all(torch.equal(weights[k], reference[k]) for k in reference)
