"""Knobs that cannot change a result (params ``runtime``) rerun nothing: the real DVC says so.

W&B's names, the checkpoint cadence, the logging interval and the DataLoader workers live
in ``runtime``, which no training stage declares; changing any of them must leave a
trained run up to date, while a knob of the recipe still retrains it.
"""

import pytest

pytestmark = pytest.mark.slow

STAGE = "train@ladder-mlp-1337"


def _shrink(params: dict) -> None:
    params["budget"]["scale"] = 0.001  # 3 steps
    params["model"]["d_model"] = 32
    params["train"]["batch_size"] = 8
    params["trainer"]["accelerator"] = "cpu"


def _change_the_runtime(params: dict) -> None:
    runtime = params["runtime"]
    runtime["wandb"]["project"] = "another-project"
    runtime["wandb"]["init_timeout_s"] = 5
    runtime["checkpoint"]["every_n_train_steps"] = 1
    runtime["log_every_n_steps"] = 1
    runtime["num_workers"] = 1


def _dry_run(project) -> list[str]:
    return project.ran_stages(project.dvc("repro", "--dry", STAGE).stdout)


def test_a_runtime_knob_retrains_nothing_while_a_recipe_knob_retrains(tokenized_project):
    project = tokenized_project
    project.edit_params(_shrink)
    project.dvc("repro", STAGE)
    assert _dry_run(project) == []  # the baseline: the run is up to date

    project.edit_params(_change_the_runtime)
    assert _dry_run(project) == []
    assert "up to date" in project.dvc("status", STAGE).stdout

    project.edit_params(lambda params: params["train"].update(lr=2.0e-3))
    assert _dry_run(project) == [STAGE]
