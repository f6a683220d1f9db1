"""The real DVC training matrix, at a tiny budget and width.

The first run goes through the fan-out (``attnlab repro``, each stage a real ``dvc repro
--single-item``); a serial ``dvc repro`` then finds nothing to do.

The catalogue is cut to one or two variants of each trained experiment (every variant is
the same matrix entry of dvc.yaml; tests/models builds and trains each one in-process),
so that each variant's stage costs its seconds of start-up only where it adds a check.
"""

import json

import pytest
from train_helpers import SEED, offline_runs, run_folder, wandb_records

from attnlab.config.files import read_params_mapping
from attnlab.runs import load_trained_model, read_curve

pytestmark = pytest.mark.slow

SCALE = 0.001  # P0's 3000 steps become 3; E08's short 1500 become 2; E11's 1000 become 1
# Two ladder rows (one chart, two lines) and the sweeps' two variants (E08's short protocol,
# E11's twelve blocks). E13's longer context trains in tests/evaluation's stages, and E18's
# two blocks are a shallower norm-pre.
KEEP = ("ladder-mlp", "ladder-layernorm", "dk-128-scaled", "norm-pre")


def _shrink(params: dict) -> None:
    params["budget"]["scale"] = SCALE
    params["variants"] = {name: params["variants"][name] for name in KEEP}
    params["extra_seeds"].update(seeds=[], variants=[], winograd_variants=[])  # its rows are cut
    params["model"]["d_model"] = 32
    params["train"]["batch_size"] = 8
    params["runtime"]["log_every_n_steps"] = 1


def _run_names(wandb_dir) -> list[str]:
    names = []
    for run_file in offline_runs(wandb_dir):
        for record in wandb_records(run_file):
            if record.WhichOneof("record_type") == "run":
                names.append(record.run.display_name)
                break
    return names


def test_every_variant_trains_once_and_one_knob_reruns_one_variant(tokenized_project, tmp_path):
    dvc_project = tokenized_project  # the data stages recorded: tests/data runs them
    dvc_project.env["OMP_NUM_THREADS"] = "1"  # tiny models: one thread is fastest
    # wandb.init costs seconds a process (the W&B tests cover it); the experiment below
    # runs with W&B offline to check the run is named after the DVC experiment.
    dvc_project.env["WANDB_MODE"] = "disabled"
    dvc_project.edit_params(_shrink)
    root = dvc_project.root
    variants = list(read_params_mapping(root / "params.yaml")["variants"])
    assert variants == list(KEEP)

    ran = dvc_project.fan_out("train")  # independent runs: two at a time
    trained_stages = sorted(stage for stage in ran if stage.startswith("train@"))
    assert trained_stages == sorted(f"train@{variant}-{SEED}" for variant in variants)
    for variant in variants:
        run = run_folder(variant)
        metrics = json.loads((root / f"reports/metrics/{run}/train.json").read_text())
        assert metrics["train/loss"] > 0 and metrics["tokens_per_s"] > 0, variant
        assert metrics["seed"] == metrics["init_seed"] == metrics["data_seed"] == SEED
        curve = read_curve(root / f"reports/curves/{run}/train_loss.csv")
        assert [step for step, _ in curve] == list(range(metrics["steps"])), variant
        trained = load_trained_model(root / f"data/models/{run}")
        assert trained.name == variant and trained.model.config.d_model == 32
    assert not list((tmp_path / "runs").glob("checkpoints/*/last.ckpt"))

    again = dvc_project.dvc("repro", "train")
    assert dvc_project.ran_stages(again.stdout) == []

    dvc_project.env["WANDB_MODE"] = "offline"
    # DVC writes 0.00002 back as 2e-05: a float to DVC (YAML 1.2), text to YAML 1.1.
    exp = dvc_project.dvc("exp", "run", "-S", "variants.norm-pre.train.lr=0.00002", "train")
    assert dvc_project.ran_stages(exp.stdout) == [f"train@norm-pre-{SEED}"]
    trained = load_trained_model(root / f"data/models/{run_folder('norm-pre')}")
    assert trained.train["lr"] == 0.00002
    (name,) = _run_names(tmp_path / "wandb")
    assert name.endswith(f"/norm-pre/seed-{SEED}") and not name.startswith("workspace/")

    # One chart per experiment, one line per trained row: the first seed's run (the
    # ladder rows this cut catalogue does not train are left out).
    dvc_project.dvc("repro", "--single-item", "charts")
    plots = json.loads(dvc_project.dvc("plots", "show", "--json").stdout)
    (chart,) = plots["data"]["reports/charts/E02-train-loss.csv"]
    drawn = {row["variant"] for row in chart["content"]["data"]["values"]}
    assert drawn == {"ladder-mlp", "ladder-layernorm"}
