"""The loader names the true cause and key of every bad params file.

Before: a duplicate key silently kept the last value; ``1e-3`` was "not a valid number"
without saying YAML read it as text; a NaN ``budget.scale`` was reported as "must be
<= 100"; an error in the shared ``model`` section was reported under the first variant;
``seed: 2**63`` passed and failed mid-stage.
"""

import copy
from pathlib import Path

import pytest

from attnlab.config import load_params, parse_params
from attnlab.config.files import read_params_mapping
from attnlab.errors import ParamsError

PARAMS_TEXT = (Path(__file__).resolve().parents[2] / "params.yaml").read_text(encoding="utf-8")
REAL = read_params_mapping(Path(__file__).resolve().parents[2] / "params.yaml")


def _edited(section: str, **values) -> dict:
    params = copy.deepcopy(REAL)
    if section:
        params[section].update(values)
    else:
        params.update(values)
    return params


def test_a_key_given_twice_is_refused_naming_it_and_its_line(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_text(PARAMS_TEXT.replace("seed: ", "seed: 7\nseed: ", 1), encoding="utf-8")
    with pytest.raises(ParamsError, match=r"duplicate key 'seed'(.|\n)*line \d+"):
        load_params(path)


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        (
            _edited("train", lr="1e-3"),
            "train.lr: Input should be a valid number (YAML read '1e-3' as text",
        ),
        (_edited("budget", scale=float("nan")), "budget.scale: Input should be a finite number"),
        (_edited("model", n_head=7), "\n  model.n_head: d_model=128 is not divisible by n_head=7"),
        (_edited("", seed=2**63), "seed: Input should be less than or equal to 4294967295"),
    ],
    ids=["text-number", "nan", "shared-model", "seed"],
)
def test_the_message_names_the_true_cause_and_key(params, expected):
    with pytest.raises(ParamsError) as caught:
        parse_params(params)
    assert expected in str(caught.value)
