"""The probes and cost sections of params.yaml: loaded, validated, named in every error."""

import copy
import re
from pathlib import Path

import pytest

from attnlab.config import parse_params
from attnlab.config.files import read_params_mapping
from attnlab.errors import ParamsError

PARAMS = read_params_mapping(Path(__file__).resolve().parents[2] / "params.yaml")


def test_the_catalogue_sizes_are_the_defaults():
    params = parse_params(PARAMS)
    assert params.probes.dims == [4, 16, 64, 256, 1024]
    assert (params.probes.pairs, params.probes.rows, params.probes.row_length) == (20000, 2000, 64)
    assert params.cost.lengths == [128 * 2**k for k in range(8)]  # 128 ... 16384
    assert (params.cost.d_model, params.cost.n_head, params.cost.batch) == (512, 8, 1)


@pytest.mark.parametrize(
    ("section", "key", "value", "message"),
    [
        ("cost", "max_tokens", 3000, "cost: max_tokens: must be min_tokens (128) times a power"),
        ("cost", "device", "tpu", "cost.device: Input should be 'auto', 'cpu' or 'cuda'"),
        ("cost", "n_head", 7, "cost: n_head: d_model=512 is not divisible by 7"),
        ("probes", "example_d", 32, "probes: example_d: must be one of dims"),
        ("probes", "dims", [64, 16], "probes: dims: must be strictly increasing"),
        ("probes", "pairz", 1, "probes.pairz: unknown key"),
    ],
)
def test_a_bad_value_is_rejected_naming_its_key(section, key, value, message):
    raw = copy.deepcopy(PARAMS)
    raw[section][key] = value
    with pytest.raises(ParamsError, match=re.escape(message)):
        parse_params(raw)
