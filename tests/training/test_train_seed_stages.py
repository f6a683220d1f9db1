"""Seeds as data: the real ``dvc repro --dry`` reruns exactly the runs a params edit touches.

Every trained variant is a DVC matrix over variant x seed, and no stage declares the
``seeds`` list, so adding a seed adds only its runs, removing one retrains nothing, and one
variant's knob reruns that variant under every seed (docs/catalogue.md, P0, Seeds).
"""

import json

import pytest

from attnlab.runs import load_trained_model

pytestmark = pytest.mark.slow

SEED = 1337
# One P0 variant and the Winograd variant the maps draw, with what they depend on.
TARGETS = (
    "train@ladder-mlp-*",
    "evaluate@ladder-mlp-*",
    "winograd-score@closed-two-blocks-[0-9]*",  # not its protocol twin (-short)
    "winograd-maps",
)
# Their training stages: a dry run stops at a stage whose input is not there yet.
TRAINING = ("train@ladder-mlp-*", "winograd-train@closed-two-blocks-[0-9]*")


def _shrink(params: dict) -> None:
    params["budget"]["scale"] = 0.001  # 3 steps of P0, 2 of Winograd
    params["model"]["d_model"] = 32
    params["train"]["batch_size"] = 8
    params["runtime"]["log_every_n_steps"] = 1


def _repro(project, *options: str, targets: tuple[str, ...] = TARGETS) -> set[str]:
    done = project.dvc("repro", *options, "--glob", *targets)
    return set(project.ran_stages(done.stdout))


def _fan_out(project, seeds: list[int]) -> set[str]:
    """Bring TARGETS up to date under ``seeds`` with the fan-out: the stages that ran.

    The P0 and the Winograd runs are independent chains, so they run side by side. The
    fan-out takes stage names, not globs; the training stages come as their deps.
    """
    chains = ("evaluate@ladder-mlp", "winograd-score@closed-two-blocks")
    targets = [f"{chain}-{seed}" for chain in chains for seed in seeds]
    return set(project.fan_out(*targets, "winograd-maps"))


def _set_seeds(seeds: list[int]):
    def edit(params: dict) -> None:
        params["seeds"] = seeds

    return edit


def _set_lr(lr: float):
    def edit(params: dict) -> None:
        params["variants"]["ladder-mlp"]["train"] = {"lr": lr}

    return edit


def _runs_of(*names: str, seeds: tuple[int, ...]) -> set[str]:
    return {f"{name}-{seed}" for name in names for seed in seeds}


def test_adding_a_seed_runs_only_its_stages_and_removing_one_retrains_nothing(
    tokenized_project,
):
    dvc_project = tokenized_project  # the data stages recorded: tests/data runs them
    dvc_project.env["OMP_NUM_THREADS"] = "1"
    dvc_project.env["WANDB_MODE"] = "disabled"
    dvc_project.edit_params(_shrink)
    root = dvc_project.root
    first = _fan_out(dvc_project, [SEED])
    assert _runs_of("train@ladder-mlp", "winograd-score@closed-two-blocks", seeds=(SEED,)) < first

    dvc_project.edit_params(_set_seeds([SEED, SEED + 1]))
    new = _runs_of(
        "train@ladder-mlp",
        "evaluate@ladder-mlp",
        "winograd-train@closed-two-blocks",
        "winograd-score@closed-two-blocks",
        seeds=(SEED + 1,),
    )
    assert _repro(dvc_project, "--dry", targets=TRAINING) == {s for s in new if "train@" in s}
    assert _fan_out(dvc_project, [SEED, SEED + 1]) == new
    for seed in (SEED, SEED + 1):
        run = f"ladder-mlp/seed-{seed}"
        assert load_trained_model(root / "data/models" / run).config["seed"] == seed
        evaluation = json.loads((root / f"reports/metrics/{run}/eval.json").read_text())
        assert evaluation["seed"] == evaluation["init_seed"] == seed
        score = root / f"reports/metrics/winograd/closed-two-blocks/seed-{seed}.json"
        assert json.loads(score.read_text())["data_seed"] == seed

    # One variant's knob: that variant's runs under every seed, nothing else (a dry run
    # lists the stages whose own inputs changed; their evaluations follow them).
    dvc_project.edit_params(_set_lr(0.002), commit=False)
    assert _repro(dvc_project, "--dry") == _runs_of("train@ladder-mlp", seeds=(SEED, SEED + 1))
    dvc_project.run("git", "checkout", "params.yaml")

    dvc_project.edit_params(_set_seeds([SEED]))  # the last seed gone: nothing to do
    assert _repro(dvc_project, "--dry") == set()
    dvc_project.edit_params(_set_seeds([SEED + 1]))  # the first gone: only the maps move
    assert _repro(dvc_project, "--dry") == {"winograd-maps"}
