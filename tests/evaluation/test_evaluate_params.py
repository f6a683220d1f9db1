"""The evaluate section of params.yaml: what it measures for which experiment, and checks."""

import copy
from pathlib import Path

import pytest
import yaml

from attnlab.config import parse_params
from attnlab.errors import ParamsError

PARAMS = yaml.safe_load((Path(__file__).resolve().parents[2] / "params.yaml").read_text())


def _parsed(edit=lambda p: None):
    params = copy.deepcopy(PARAMS)
    edit(params)
    return parse_params(params)


def test_every_listed_experiment_has_variants_and_the_story_gets_its_measurements():
    params = _parsed()
    experiments = {params.variant(name).experiment for name in params.variants}
    assert set(params.evaluate.measurements) <= experiments  # a typo would measure nothing
    assert params.evaluate.measurements_for("positions") == ("extrapolation",)
    assert params.evaluate.measurements_for("dk") == ("score_stats",)
    assert params.evaluate.measurements_for("norm") == ("grad_norms",)
    assert params.evaluate.measurements_for("ladder") == ()
    assert params.evaluate.lengths == [64, 128, 256]
    longest = max(params.evaluate.lengths)
    for name in params.variants:
        variant = params.variant(name)
        if variant.experiment == "positions":
            assert variant.model.positions >= longest  # the learned table holds every length


def test_the_curve_interval_scales_with_the_budget():
    params = _parsed(lambda p: p["budget"].update(scale=0.02))
    assert params.evaluate.curve.every(params.budget) == 2  # 100 steps at 1.0
    tiny = _parsed(lambda p: p["budget"].update(scale=0.001))
    assert tiny.evaluate.curve.every(tiny.budget) == 1


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda p: p["evaluate"]["measurements"].update(dk=["scores"]), "evaluate.measurements.dk"),
        (lambda p: p["evaluate"].update(lengths=[]), "evaluate.lengths"),
        (lambda p: p["evaluate"].update(stats_windows=0), "evaluate.stats_windows"),
        (lambda p: p["evaluate"].update(device="tpu"), "evaluate.device"),
        (lambda p: p["evaluate"]["curve"].update(every=5), "evaluate.curve.every"),
    ],
)
def test_bad_evaluate_params_are_refused_naming_the_key(edit, expected):
    with pytest.raises(ParamsError, match=expected.replace(".", r"\.")):
        _parsed(edit)
