"""The loader names the true cause and key of every bad params file.

Before: a duplicate key silently kept the last value; ``1e-3`` was "not a valid number"
without saying YAML read it as text; a NaN ``budget.scale`` was reported as "must be
<= 100"; an error in the shared ``model`` section was reported under the first variant;
``seed: 2**63`` passed and failed mid-stage.
"""

import copy
from pathlib import Path

import pytest
import yaml

from attnlab.config import load_params, parse_params
from attnlab.errors import ParamsError

PARAMS_TEXT = (Path(__file__).resolve().parents[2] / "params.yaml").read_text(encoding="utf-8")
REAL = yaml.safe_load(PARAMS_TEXT)


def _refused(edit) -> str:
    params = copy.deepcopy(REAL)
    edit(params)
    with pytest.raises(ParamsError) as caught:
        parse_params(params)
    return str(caught.value)


def test_a_key_given_twice_is_refused_naming_it_and_its_line(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_text(PARAMS_TEXT.replace("seed: ", "seed: 7\nseed: ", 1), encoding="utf-8")
    with pytest.raises(ParamsError, match=r"duplicate key 'seed'(.|\n)*line \d+"):
        load_params(path)


def test_a_number_yaml_reads_as_text_is_explained():
    message = _refused(lambda p: p["train"].update(lr="1e-3"))
    assert "train.lr: " in message and "YAML read '1e-3' as text" in message


def test_a_nan_is_refused_as_not_finite_not_as_out_of_range():
    message = _refused(lambda p: p["budget"].update(scale=float("nan")))
    assert "budget.scale: Input should be a finite number" in message


def test_an_error_in_the_shared_model_is_named_under_model():
    message = _refused(lambda p: p["model"].update(n_head=7))
    assert "model.n_head: " in message and "variants." not in message


def test_a_seed_beyond_32_bits_is_refused():
    message = _refused(lambda p: p.update(seed=2**63))
    assert "seed: Input should be less than or equal to 4294967295" in message
