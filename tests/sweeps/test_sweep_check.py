"""The best-trial check, ``sweep-check@<study>-<seed>``: its params, its refusals, a real repro."""

import json
import math
from pathlib import Path

import pytest
from dvc.repo import Repo
from sweep_helpers import PROJECT_ROOT, REAL_PARAMS, sweep_params

from attnlab.config.loader import Params
from attnlab.errors import AttnlabError, ParamsError
from attnlab.sweeps.check import check_record, check_variant, read_best_params, study_params


def _stage(name: str):
    return next(s for s in Repo(str(PROJECT_ROOT)).index.stages if s.addressing == name)


def test_each_check_reads_its_own_study_and_its_best_json():
    first = REAL_PARAMS["seeds"][0]
    stage = _stage(f"sweep-check@dk-{first}")
    params = [key for dep in stage.params for key in dep.params]
    assert "sweeps.studies.dk" in params and "sweeps.studies.warmup" not in params
    assert "variants" in params and "sweeps.storage" not in params  # not how the study ran
    assert "reports/sweeps/dk/best.json" in [str(dep.def_path) for dep in stage.deps]
    outs = [str(out.def_path) for out in stage.outs]
    assert f"reports/metrics/sweep-check/dk/seed-{first}/eval.json" in outs


def _params(**study: object) -> Params:
    raw = sweep_params()
    raw["sweeps"]["studies"]["dk"].update(study)
    return Params.model_validate(raw)


def test_the_check_is_the_variant_with_the_best_params_set_over_it_at_full_length():
    params = _params()
    variant = check_variant(params, "dk", {"d_head": 48, "scale_scores": False})
    choice = params.variant("dk-128-scaled")
    assert variant.name == "sweep-check-dk"
    assert (variant.model.d_head, variant.model.scale_scores) == (48, False)
    assert variant.train == choice.train  # its own steps, not the study's budget
    assert check_record(params, "dk", {"d_head": 128, "scale_scores": True})["same_as_choice"]


def test_a_missing_best_json_says_which_sweep_to_run(tmp_path):
    with pytest.raises(AttnlabError, match=r"best.json: missing: .*dvc repro sweep@dk"):
        read_best_params(tmp_path / "best.json", "dk", ["d_head", "scale_scores"])


def test_a_best_json_of_another_space_is_refused(tmp_path):
    path = tmp_path / "best.json"
    path.write_text(json.dumps({"params": {"d_head": 64}}))
    with pytest.raises(AttnlabError, match=r"not the axes of sweeps.studies.dk.space"):
        read_best_params(path, "dk", ["d_head", "scale_scores"])
    path.write_text("{")
    with pytest.raises(AttnlabError, match=r"best.json: no best trial's params"):
        read_best_params(path, "dk", ["d_head"])


def test_an_unknown_study_or_a_best_the_model_refuses_is_named():
    params = _params()
    with pytest.raises(ParamsError, match=r"sweeps.studies.nope: no such study; known: dk"):
        study_params(params, "nope")
    with pytest.raises(ParamsError, match=r"d_head"):
        check_variant(params, "dk", {"d_head": 0, "scale_scores": True})


def test_the_stage_refuses_a_missing_best_json_with_exit_2(sweep_project):
    project = sweep_project("p", sweep_params())
    done = project.run("sweep-check", "--study", "dk", "--seed", "1")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "error: reports/sweeps/dk/best.json: missing" in done.stderr
    assert not (project.root / "data" / "sweeps" / "check").exists()  # nothing trained


@pytest.mark.slow
def test_repro_trains_the_best_trial_and_measures_it(tokenized_project):
    dvc_project = tokenized_project  # the data stages recorded: tests/data runs them
    seed = REAL_PARAMS["seeds"][0]
    base_steps = REAL_PARAMS["variants"]["dk-128-scaled"]["train"]["steps"]

    def shrink(params: dict) -> None:
        # The committed shape (trials at budget 1.0 of the variant), at 8 steps a run.
        params.update(sweep_params(trials=2, steps=8), seeds=[seed])
        params["budget"]["scale"] = 8 / base_steps
        params["sweeps"]["studies"]["dk"]["budget"] = 1.0

    dvc_project.edit_params(shrink)
    stage = f"sweep-check@dk-{seed}"
    done = dvc_project.dvc("repro", stage)
    assert dvc_project.ran_stages(done.stdout)[-2:] == ["sweep@dk", stage]

    root: Path = dvc_project.root
    best = json.loads((root / "reports/sweeps/dk/best.json").read_text())
    record = json.loads(
        (root / f"reports/metrics/sweep-check/dk/seed-{seed}/eval.json").read_text()
    )
    assert math.isfinite(record["val/ppl"]) and record["seed"] == seed
    assert record["check"]["best_params"] == best["params"]
    # The first seed is the root seed the trials ran under, and the study's budget is 1.0:
    # the check is the best trial itself, trained again, so it scores what the trial did.
    assert seed == REAL_PARAMS["seed"]
    assert record["val/ppl"] == pytest.approx(best["val/ppl"], rel=1e-3)
    trained = json.loads(
        (root / f"reports/metrics/sweep-check/dk/seed-{seed}/train.json").read_text()
    )
    assert trained["steps"] == 8  # the variant's full length at this budget.scale
    config = json.loads((root / f"data/sweeps/check/dk/seed-{seed}/config.json").read_text())
    assert config["model"]["d_head"] == best["params"]["d_head"]
    assert config["model"]["scale_scores"] == best["params"]["scale_scores"]
