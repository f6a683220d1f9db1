"""The evaluate section of params.yaml: its knobs and the checks on them.

What is measured for which experiment is the catalogue's (tests/catalogue).
"""

import copy
from pathlib import Path

import pytest
import torch

from attnlab.catalogue import experiment, measurements_for
from attnlab.config import parse_params
from attnlab.config.files import read_params_mapping
from attnlab.errors import AttnlabError, ParamsError
from attnlab.evaluation.saved_run import evaluation_device

PARAMS = read_params_mapping(Path(__file__).resolve().parents[2] / "params.yaml")


def _parsed(edit=lambda p: None):
    params = copy.deepcopy(PARAMS)
    edit(params)
    return parse_params(params)


def test_every_extrapolated_variant_holds_every_evaluation_length():
    params = _parsed()
    assert params.evaluate.lengths == [64, 128, 256]
    longest = max(params.evaluate.lengths)
    extrapolated = [name for name in params.variants if "extrapolation" in measurements_for(name)]
    assert extrapolated == experiment("E13").variants
    for name in extrapolated:  # the learned table holds every length
        assert params.variant(name).model.positions >= longest


def test_the_curve_interval_scales_with_the_budget_down_to_its_floor():
    half = _parsed(lambda p: p["budget"].update(scale=0.5))
    assert half.evaluate.curve.every(half.budget) == 25  # 50 steps at 1.0
    # A whole-split point every step would cost more than a quick run's training.
    quick = _parsed(lambda p: p["budget"].update(scale=0.02))
    assert quick.evaluate.curve.every(quick.budget) == 10  # min_every_steps, not 1
    floorless = _parsed(
        lambda p: (p["budget"].update(scale=0.02), p["evaluate"]["curve"].update(min_every_steps=1))
    )
    assert floorless.evaluate.curve.every(floorless.budget) == 1


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda p: p["evaluate"].update(measurements={}), "evaluate.measurements: unknown key"),
        (lambda p: p["evaluate"].update(lengths=[]), "evaluate.lengths"),
        (lambda p: p["evaluate"].update(stats_windows=0), "evaluate.stats_windows"),
        (lambda p: p["evaluate"].update(device="tpu"), "evaluate.device"),
        (lambda p: p["evaluate"]["curve"].update(every=5), "evaluate.curve.every"),
    ],
)
def test_bad_evaluate_params_are_refused_naming_the_key(edit, expected):
    with pytest.raises(ParamsError, match=expected.replace(".", r"\.")):
        _parsed(edit)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has the GPU asked for")
def test_cuda_asked_for_on_a_machine_without_it_says_so():
    # Before, the model's weights failed to load onto CUDA and the model folder was blamed.
    with pytest.raises(AttnlabError, match="evaluate.device: cuda, but CUDA is not available"):
        evaluation_device("cuda")
