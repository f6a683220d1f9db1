"""A divergent run fails the stage naming the step; non-finite params never start one.

"Nothing wrong is accepted silently": before, ``train.lr: 1.0e+6`` ended with exit 0 and
``"train/loss": NaN`` in the metrics, and ``lr: 5.0`` in an OverflowError traceback.
"""

import math

import pytest
from train_helpers import shrunk_params

from attnlab.config import parse_params
from attnlab.errors import AttnlabError, ParamsError

VARIANT = "ladder-mlp"


@pytest.mark.parametrize(
    ("section", "key", "value"),
    [
        ("train", "lr", math.inf),
        ("train", "weight_decay", math.inf),
        ("budget", "scale", math.nan),
    ],
)
def test_a_non_finite_param_is_refused_naming_its_key(section, key, value):
    with pytest.raises(ParamsError, match=rf"{section}\.{key}: Input should be a finite number"):
        parse_params(shrunk_params(**{section: {key: value}}))


@pytest.mark.parametrize("lr", [5.0, 1.0e6])
def test_a_diverging_stage_exits_2_naming_the_step_and_writes_no_model(stage_project, lr):
    project = stage_project(f"lr-{lr}", shrunk_params(steps=20, train={"lr": lr}))
    failed = project.run(VARIANT)
    assert failed.returncode == 2, failed.stdout + failed.stderr
    assert "Traceback" not in failed.stderr
    line = failed.stderr.strip().splitlines()[-1]
    assert line.startswith(f"error: {VARIANT}: ") and " at step " in line
    assert "training diverged" in line
    assert not (project.root / "data" / "models").exists()
    assert not (project.root / "reports" / "metrics").exists()


def test_a_nan_loss_stops_the_fit_at_the_flush_that_sees_it(train_in_process):
    with pytest.raises(AttnlabError, match=r"train/loss is nan at step \d+: training diverged"):
        train_in_process(shrunk_params(steps=20, train={"lr": 1.0e6}), VARIANT)
