"""What a run's seed controls: the initial weights (and dropout) and the batch order, apart.

docs/catalogue.md, P0, Seeds: ``train.init_seed`` and ``train.data_seed`` pin one of the
two, so the runs of a variant can differ in their weights alone or in their batches alone.
"""

import lightning.pytorch as pl
import pytest
import torch
from train_helpers import SEED, shrunk_params

from attnlab.config import parse_params
from attnlab.errors import ParamsError
from attnlab.training import TrainJob, fingerprint

VARIANT = "ladder-mlp"


class _Seen(pl.Callback):
    """Records the initial weights and every step's batch."""

    def __init__(self) -> None:
        self.initial: dict[str, torch.Tensor] = {}
        self.batches: list[torch.Tensor] = []

    def on_train_start(self, trainer, pl_module) -> None:
        self.initial = {k: v.detach().clone() for k, v in pl_module.state_dict().items()}

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx) -> None:
        self.batches.append(batch.x.clone())


def _pinned(**knobs: int) -> dict:
    params = shrunk_params(steps=3, model={"dropout": 0.1})
    params["variants"][VARIANT]["train"] = knobs
    return params


def _train(train_in_process, params: dict, seed: int) -> _Seen:
    seen = _Seen()
    train_in_process(params, VARIANT, seed=seed, callbacks=[seen])
    return seen


def _same_weights(a: _Seen, b: _Seen) -> bool:
    return all(torch.equal(a.initial[key], b.initial[key]) for key in a.initial)


def _same_batches(a: _Seen, b: _Seen) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a.batches, b.batches, strict=True))


def test_init_and_data_seeds_vary_apart(train_in_process):
    base = _train(train_in_process, _pinned(), SEED)
    other = _train(train_in_process, _pinned(), SEED + 1)
    assert not _same_weights(base, other) and not _same_batches(base, other)

    weights_only = _train(train_in_process, _pinned(data_seed=SEED), SEED + 1)
    assert not _same_weights(base, weights_only) and _same_batches(base, weights_only)

    batches_only = _train(train_in_process, _pinned(init_seed=SEED), SEED + 1)
    assert _same_weights(base, batches_only) and not _same_batches(base, batches_only)


def test_the_knobs_default_to_the_runs_seed_and_every_seed_has_its_own_fingerprint(
    train_tokens,
):
    default = TrainJob.from_params(parse_params(_pinned()), VARIANT, SEED + 1)
    assert default.seeds() == {"seed": SEED + 1, "init_seed": SEED + 1, "data_seed": SEED + 1}
    root = TrainJob.from_params(parse_params(_pinned()), VARIANT)
    assert root.seed == parse_params(_pinned()).seed  # a sweep trial's: the root seed
    both = _pinned(init_seed=7, data_seed=7)
    jobs = [TrainJob.from_params(parse_params(both), VARIANT, seed) for seed in (SEED, SEED + 1)]
    assert jobs[0].init_seed == jobs[1].init_seed == 7
    # Same weights and batches, but two runs: they must never share resume state.
    assert fingerprint(jobs[0], train_tokens) != fingerprint(jobs[1], train_tokens)


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        ({"seeds": []}, "seeds: List should have at least 1 item"),
        ({"seeds": [1, 2, 1]}, "seeds: Value error, seed 1 is listed twice"),
        ({"seeds": [-1]}, "seeds.0: Input should be greater than or equal to 0"),
        ({"train": {"data_seed": 2**32}}, "train.data_seed: Input should be less than or equal"),
    ],
)
def test_bad_seeds_are_named(edit, expected):
    params = shrunk_params()
    for key, value in edit.items():
        if isinstance(value, dict):
            params[key].update(value)
        else:
            params[key] = value
    with pytest.raises(ParamsError) as caught:
        parse_params(params)
    assert expected.replace("Value error, ", "") in str(caught.value)
