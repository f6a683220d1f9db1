"""The real DVC Winograd stages on a tiny budget, in a throw-away clone.

The first run goes through the fan-out (``attnlab repro``); a serial ``dvc repro`` then
finds nothing to do, and its ``--dry`` predicts what one variant's knob reruns.
"""

import json

import pytest

from attnlab.runs import read_curve

pytestmark = pytest.mark.slow

# One variant per task, the bag of words and the maps' two-block model: each task's split,
# each kind of mixer (tests/winograd trains and scores every variant in-process).
VARIANTS = ("leaky-average", "closed-two-blocks")
SEED = 1337  # the first of params seeds, the one seed the tests' project keeps


def _shrink(params: dict) -> None:
    winograd = params["winograd"]
    winograd["model"]["d_model"] = 16
    winograd["train"]["steps"] = 20
    winograd["variants"] = {name: winograd["variants"][name] for name in VARIANTS}
    params["extra_seeds"].update(seeds=[], variants=[], winograd_variants=[])  # its rows are cut


def test_repro_scores_every_variant_and_draws_the_maps(dvc_project):
    dvc_project.env["WANDB_MODE"] = "disabled"  # W&B has its own tests; seconds a stage here
    dvc_project.edit_params(_shrink)
    # The fan-out (each stage a real `dvc repro --single-item`) trains the variants side by
    # side; DVC's graph orders only what depends on what: the maps follow the model they
    # read, while the score stages may finish before or after them.
    ran = dvc_project.fan_out("winograd-score", "winograd-maps")
    assert ran[0] == "winograd-data"
    assert ran.index("winograd-maps") > ran.index(f"winograd-train@closed-two-blocks-{SEED}")
    stages = {
        f"{stage}@{v}-{SEED}" for v in VARIANTS for stage in ("winograd-train", "winograd-score")
    }
    assert stages <= set(ran)
    root = dvc_project.root
    metrics_dir = root / "reports/metrics/winograd"
    for variant in VARIANTS:
        metrics = json.loads((metrics_dir / variant / f"seed-{SEED}.json").read_text())
        assert metrics["seed"] == metrics["init_seed"] == metrics["data_seed"] == SEED
        shares = [metrics[f"winograd/{k}"] for k in ("acc", "wrong_noun", "neither")]
        assert all(0.0 <= s <= 1.0 for s in shares) and sum(shares) == pytest.approx(1, abs=1e-3)
        assert metrics["winograd/sentences"] == (128 if variant.startswith("leaky") else 240)
        train = json.loads((metrics_dir / "train" / variant / f"seed-{SEED}.json").read_text())
        assert train["steps"] == 20 and train["seed"] == SEED
        assert (root / f"reports/curves/winograd/{variant}/seed-{SEED}.csv").is_file()
        along = root / f"reports/curves/winograd/{variant}/seed-{SEED}/accuracy.csv"
        steps, accuracy = zip(*read_curve(along, "accuracy"), strict=True)
        assert steps == (0, 1, 2, 4, 8, 16, 20) and accuracy[-1] == metrics["winograd/acc"]
    data = json.loads((metrics_dir / "data.json").read_text())
    assert data["closed"]["held_out_design"] == "orientation"
    assert data["leaky"]["held_out_design"] == "pairs"
    maps = json.loads((root / "reports/tables/winograd/maps.json").read_text())
    assert maps["variant"] == "closed-two-blocks" and len(maps["adjectives"]) == 8
    assert all(len(row["blocks"]) == 2 for row in maps["adjectives"].values())
    for figure in ("winograd_maps.png", "winograd_adjectives.png"):
        assert (root / "reports/figures" / figure).read_bytes()[:4] == b"\x89PNG"

    again = dvc_project.dvc("repro", "winograd-score", "winograd-maps")
    assert dvc_project.ran_stages(again.stdout) == []

    # One variant's knob reruns that variant alone: both of its stages declare its entry.
    def residual(params: dict) -> None:
        params["winograd"]["variants"]["leaky-average"]["model"]["residual"] = True

    dvc_project.edit_params(residual, commit=False)
    dry = dvc_project.dvc("repro", "--dry", "winograd-score", "winograd-maps")
    assert sorted(dvc_project.ran_stages(dry.stdout)) == [
        f"winograd-score@leaky-average-{SEED}",
        f"winograd-train@leaky-average-{SEED}",
    ]
    dvc_project.run("git", "checkout", "params.yaml")

    # The held-out design is the data's: new task files, so every run comes again, and the
    # closed models are scored on every sentence of the nouns held out (4 of 16 nouns: the
    # 108 ordered pairs with one of them, 864 sentences).
    def nouns(params: dict) -> None:
        params["winograd"]["closed"]["held_out"]["design"] = "nouns"

    dvc_project.edit_params(nouns, commit=False)
    harder = dvc_project.dvc("repro", "winograd-score", "winograd-maps")
    assert set(dvc_project.ran_stages(harder.stdout)) == {"winograd-data", "winograd-maps"} | stages
    data = json.loads((metrics_dir / "data.json").read_text())["closed"]
    assert data["held_out_design"] == "nouns" and data["held_out_sentences"] == 864
    score = json.loads((metrics_dir / f"closed-two-blocks/seed-{SEED}.json").read_text())
    assert score["winograd/sentences"] == 864
