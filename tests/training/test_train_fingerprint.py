"""A checkpoint's fingerprint changes with every param the train stage declares.

Before, ``evaluate.curve.every_steps`` (and the curve's sample of windows, since replaced
by the whole split) and ``trainer.compile`` were left out: a stopped run resumed after
such a change and recorded a curve drawn partly at one cadence and partly at another. The
knobs are read from dvc.yaml's train stage, so a knob the stage comes to declare is
checked here too.
"""

import copy

import pytest
import yaml
from train_helpers import PROJECT_ROOT, SEED, shrunk_params

from attnlab.config import parse_params
from attnlab.data.tokens import read_tokens
from attnlab.training import TrainJob, fingerprint
from attnlab.training.recorded import validation_curve

VARIANT = "ladder-mlp"
PARAMS = shrunk_params(steps=300)  # budget 0.1: twice every_steps is twice the cadence
# model and train are defaults under every variant's overrides: a knob of theirs changes in
# VARIANT's overrides (another variant may refuse a changed default: rope needs attention).
OVERRIDDEN = ("model", "train")
# The changed value of a knob that is not a number or a bool, or whose double is invalid.
OTHER = {
    "evaluate.curve.min_every_steps": 20,  # its double stays under the scaled every_steps
    "model.d_head": 8,
    "model.max_positions": 64,
    "model.mixer": "uniform",
    "model.position": "rope",
    "model.norm": "post",
    "model.dropout": 0.1,
    "train.betas": [0.8, 0.999],
    "train.warmup_steps": 100,
    "train.init_seed": 7,
    "train.data_seed": 7,
    "trainer.accelerator": "auto",
    "trainer.devices": 1,
    "trainer.strategy": "ddp",
    "trainer.precision": "bf16-mixed",
    "trainer.matmul_precision": "high",
    f"variants.{VARIANT}.model.norm": "pre",
}


def _leaves(tree: dict, prefix: str) -> list[str]:
    if not isinstance(tree, dict) or not tree:
        return [prefix]
    return [leaf for key, value in tree.items() for leaf in _leaves(value, f"{prefix}.{key}")]


def _lookup(tree: dict, dotted: str):
    for part in dotted.split("."):
        tree = tree[part]
    return tree


def _knobs() -> list[str]:
    """Every leaf under the params dvc.yaml's train stage declares."""
    stage = yaml.safe_load((PROJECT_ROOT / "dvc.yaml").read_text())["stages"]["train"]
    declared = [key.replace("${item.variant}", VARIANT) for key in stage["params"]]
    return [leaf for key in declared for leaf in _leaves(_lookup(PARAMS, key), key)]


def _changed(knob: str, value):
    if knob in OTHER:
        return OTHER[knob]
    if isinstance(value, bool):
        return not value
    assert isinstance(value, int | float), f"{knob}: add the value to change it to to OTHER"
    return value * 2


def _fingerprint(params: dict, tokens) -> str:
    """The fingerprint the train stage computes for these params (recorded.py, fit.py)."""
    cfg = parse_params(params)
    job = TrainJob.from_params(cfg, VARIANT, SEED)
    val = read_tokens(tokens.with_name("val.parquet"))
    curve = validation_curve(cfg, val, job.variant.model.block_size, tokens.parent)
    return fingerprint(job, tokens, curve)


@pytest.fixture(scope="module")
def base(train_tokens) -> str:
    return _fingerprint(PARAMS, train_tokens)


@pytest.mark.parametrize("knob", _knobs())
def test_every_declared_knob_changes_the_fingerprint(knob, base, train_tokens):
    params = copy.deepcopy(PARAMS)
    *parents, last = knob.split(".")
    value = _changed(knob, _lookup(params, knob))
    if parents and parents[0] in OVERRIDDEN:
        params["variants"][VARIANT].setdefault(parents[0], {})[last] = value
    else:
        (_lookup(params, ".".join(parents)) if parents else params)[last] = value
    assert _fingerprint(params, train_tokens) != base, f"{knob} is not in the fingerprint"


def test_the_knobs_include_what_the_issue_found_missing():
    curve = {"evaluate.curve.every_steps", "evaluate.curve.min_every_steps"}
    assert curve <= set(_knobs())
