"""One variant trained in-process: schedule, loss, metrics, the saved model read back."""

import math

import pytest
import torch
from train_helpers import shrunk_params

from attnlab.config import parse_params
from attnlab.data.batches import draw_windows
from attnlab.runs import load_trained_model, read_curve, save_trained_model, write_curve
from attnlab.training import TrainJob, warmup_factor

METRIC_KEYS = {"train/loss", "steps", "tokens_seen", "wall_s", "tokens_per_s", "params", "device"}


def test_warmup_rises_linearly_to_the_full_rate_then_stays():
    factor = warmup_factor(4)
    assert [factor(s) for s in range(7)] == [0.2, 0.4, 0.6, 0.8, 1.0, 1.0, 1.0]
    assert warmup_factor(0)(0) == 1.0


def test_the_budget_scales_steps_and_warmup_but_keeps_zero_warmup_zero():
    params = parse_params(shrunk_params(steps=30))
    assert TrainJob.from_params(params, "ladder-mlp").steps == 30
    norm = TrainJob.from_params(params, "norm-pre-warmup")  # 1000 steps, warmup 200
    assert (norm.steps, norm.warmup_steps) == (10, 2)
    assert TrainJob.from_params(params, "norm-pre").warmup_steps == 0
    assert TrainJob.from_params(params, "dk-128-scaled").steps == 15  # E08's 1500


def test_training_starts_near_ln_v_learns_and_reports(train_in_process, tmp_path):
    result = train_in_process(shrunk_params(steps=40), "ladder-layernorm")
    steps = [step for step, _ in result.curve]
    losses = [loss for _, loss in result.curve]
    assert steps == list(range(40))
    assert losses[0] == pytest.approx(math.log(1024), abs=0.6)
    assert result.metrics["train/loss"] < losses[0] - 0.3
    assert METRIC_KEYS <= set(result.metrics)
    assert result.metrics["steps"] == 40
    assert result.metrics["tokens_seen"] == 40 * 8 * 32
    assert result.metrics["device"] == "cpu"
    assert result.metrics["params"] == sum(p.numel() for p in result.model.parameters())
    # a finished run keeps its resume state until its outputs are written, then leaves none
    assert result.resume_state is not None and (result.resume_state / "last.ckpt").is_file()
    result.discard_resume_state()
    assert not list((tmp_path / "runs").glob("checkpoints/*"))


def test_a_saved_model_loads_back_with_its_variant_and_the_same_outputs(
    train_in_process, tmp_path, train_tokens
):
    from attnlab.data.tokens import read_tokens

    result = train_in_process(shrunk_params(steps=4), "positions-rope")
    save_trained_model(result.model, result.config, tmp_path / "model")
    loaded = load_trained_model(tmp_path / "model")
    assert loaded.name == "positions-rope"
    assert loaded.model.config == result.model.config
    assert loaded.config["steps"] == 4 and loaded.config["seed"] == 1337
    batch = draw_windows(read_tokens(train_tokens), 64, 2, seed=0, step=0)
    with torch.no_grad():
        assert torch.equal(loaded.model(batch.x), result.model.eval()(batch.x))


def test_a_curve_round_trips_bit_for_bit(tmp_path):
    points = [(0, 6.931471805599453), (1, 1 / 3), (2, 5.5e-8)]
    write_curve(tmp_path / "curve.csv", points)
    assert read_curve(tmp_path / "curve.csv") == points
