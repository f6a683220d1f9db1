"""A run's configuration fingerprint moves with what shapes its records, and only with that."""

import copy
from pathlib import Path

import pytest

from attnlab.config import parse_params
from attnlab.config.files import read_params_mapping
from attnlab.config.fingerprint import EVAL, TRAIN
from attnlab.training.configurations import expected_runs

ROOT = Path(__file__).resolve().parents[2]
PARAMS = read_params_mapping(ROOT / "params.yaml")
RUN, SEED = "ladder-mlp", 1337


def _fingerprints(edit=None) -> dict[str, str]:
    params = copy.deepcopy(PARAMS)
    if edit:
        edit(params)
    return expected_runs(parse_params(params), [SEED])[RUN][SEED].fingerprints


BASE = _fingerprints()


@pytest.mark.parametrize(
    ("knob", "edit", "moves"),
    [
        ("budget", lambda p: p["budget"].update(scale=0.005), {TRAIN, EVAL}),
        (
            "the variant's recipe",
            lambda p: p["variants"][RUN].update(train={"lr": 2e-3}),
            {TRAIN, EVAL},
        ),
        ("precision", lambda p: p["trainer"].update(precision="bf16-mixed"), {TRAIN, EVAL}),
        ("the curve's cadence", lambda p: p["evaluate"]["curve"].update(every_steps=7), {TRAIN}),
        ("evaluate lengths", lambda p: p["evaluate"].update(lengths=[64]), {EVAL}),
        ("evaluate device", lambda p: p["evaluate"].update(device="cpu"), set()),
        (
            "another variant",
            lambda p: p["variants"]["ladder-average"].update(train={"lr": 2e-3}),
            set(),
        ),
        ("the W&B project", lambda p: p["runtime"]["wandb"].update(project="x"), set()),
    ],
)
def test_a_knob_moves_the_fingerprints_of_the_records_it_shapes(knob, edit, moves):
    edited = _fingerprints(edit)
    assert {kind for kind in (TRAIN, EVAL) if edited[kind] != BASE[kind]} == moves, knob


def test_every_seed_is_its_own_run():
    runs = expected_runs(parse_params(copy.deepcopy(PARAMS)), [1, 2])[RUN]
    assert runs[1].fingerprints != runs[2].fingerprints
    assert runs[1].differs(TRAIN, {"seed": 2}) == "train.json seed 2, params give 1"
