"""The one rule of a run's length: steps and warmup scale with the budget, together."""

import pytest

from attnlab.config.variants import BudgetParams, TrainParams

BASE = {
    "batch_size": 64,
    "lr": 1e-3,
    "weight_decay": 0.01,
    "betas": [0.9, 0.999],
    "init_seed": None,
    "data_seed": None,
}


@pytest.mark.parametrize(
    ("scale", "steps", "warmup", "expected"),
    [
        (1.0, 3000, 0, (3000, 0)),  # no warmup stays none
        (1.0, 1000, 200, (1000, 200)),
        (0.1, 1000, 200, (100, 20)),  # the warmup keeps its share of the run
        (0.001, 1000, 200, (1, 1)),  # never fewer than one step, never longer than the run
        (0.0004, 1000, 1000, (1, 1)),
        (2.5, 1000, 1, (2500, 2)),  # 2.5 rounds to the even 2
    ],
)
def test_steps_and_warmup_scale_together(scale, steps, warmup, expected):
    train = TrainParams(steps=steps, warmup_steps=warmup, **BASE)
    assert BudgetParams(scale=scale).schedule(train) == expected
