"""The loader names the true cause and key of every bad params file.

Before: a duplicate key silently kept the last value; ``1e-05``, which DVC writes back for
``-S train.lr=0.00001``, was read as text and refused; a NaN ``budget.scale`` was reported
as "must be <= 100"; an error in the shared ``model`` section was reported under the first
variant; ``seed: 2**63`` passed and failed mid-stage.
"""

import copy
from pathlib import Path

import pytest

from attnlab.config import load_params, parse_params
from attnlab.config.files import params_files, read_params_mapping
from attnlab.errors import ParamsError
from attnlab.fanout.experiment import apply_params

PARAMS = Path(__file__).resolve().parents[2] / "params.yaml"
PARAMS_TEXT = PARAMS.read_text(encoding="utf-8")
REAL = read_params_mapping(PARAMS)


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
        (_edited("budget", scale=float("nan")), "budget.scale: Input should be a finite number"),
        (_edited("model", n_head=7), "\n  model.n_head: d_model=128 is not divisible by n_head=7"),
        (_edited("", seed=2**63), "seed: Input should be less than or equal to 4294967295"),
    ],
    ids=["nan", "shared-model", "seed"],
)
def test_the_message_names_the_true_cause_and_key(params, expected):
    with pytest.raises(ParamsError) as caught:
        parse_params(params)
    assert expected in str(caught.value)


def _dvc_reads(path: Path) -> dict:
    from dvc.utils.serialize import load_yaml

    return load_yaml(path)


def test_every_params_file_reads_as_dvc_reads_it():
    dvc = {}
    for path in params_files(PARAMS):
        dvc |= _dvc_reads(path)
    assert dvc == REAL


@pytest.mark.parametrize("text", ["1e-05", "1E+20", "1.5e3", "-2e-7", ".5e-3", "1.0e-3"])
def test_a_float_without_a_dot_or_an_exponent_sign_reads_as_dvc_reads_it(tmp_path, text):
    # DVC reads params as YAML 1.2, and writes a small float back as 1e-05; YAML 1.1
    # reads a float only with a dot and a signed exponent.
    for path in params_files(PARAMS):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    path = tmp_path / "params.yaml"
    path.write_text(PARAMS_TEXT.replace("  lr: 1.0e-3\n", f"  lr: {text}\n", 1))
    assert read_params_mapping(path)["train"]["lr"] == _dvc_reads(path)["train"]["lr"]
    assert read_params_mapping(path)["train"]["lr"] == float(text)


def test_set_param_reaches_every_float_dvc_writes(tmp_path):
    for path in params_files(PARAMS):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    apply_params(tmp_path, ["train.lr=0.00001", "budget.scale=0.00002"])
    assert "  lr: 1e-05\n" in (tmp_path / "params.yaml").read_text()  # DVC's spelling
    params = load_params(tmp_path / "params.yaml")
    assert (params.train.lr, params.budget.scale) == (0.00001, 0.00002)
