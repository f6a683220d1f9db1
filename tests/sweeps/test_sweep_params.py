"""Bad search spaces are refused before the first trial, naming the key (PITFALLS T4)."""

import copy
import subprocess
import sys
import time

import pytest
from sweep_helpers import REAL_PARAMS, sweep_params

from attnlab.config import parse_params
from attnlab.errors import ParamsError
from attnlab.sweeps import STORAGE_ENV, is_embedded, redact, storage_url

DK = "sweeps.studies.dk"


def _refused(edit) -> str:
    params = copy.deepcopy(REAL_PARAMS)
    edit(params)
    with pytest.raises(ParamsError) as raised:
        parse_params(params)
    return str(raised.value)


def _dk(params: dict) -> dict:
    return params["sweeps"]["studies"]["dk"]


def test_the_real_studies_are_valid_and_scale_like_every_step_count():
    from attnlab.sweeps import Sweep

    params = parse_params(copy.deepcopy(REAL_PARAMS))
    dk, warmup = Sweep("dk", params), Sweep("warmup", params)
    assert dk.name == "sweep-dk" and dk.study.metric == "val/ppl"
    job = dk.trial_job(3, {"d_head": 1024, "scale_scores": False})
    assert job.variant.model.head_dim == 1024 and not job.variant.model.scale_scores
    assert job.variant.model.norm == "none" and job.variant.model.n_head == 1  # E08 short
    assert job.steps == round(1500 * dk.study.budget) and job.trainer.devices == 1
    job = warmup.trial_job(0, {"warmup_steps": 500, "norm": "post", "n_head": 8})
    assert job.variant.model.n_layer == 12 and job.variant.model.head_dim == 16  # 128 / 8
    assert job.warmup_steps == round(500 * warmup.study.budget) <= job.steps


@pytest.mark.parametrize(
    ("edit", "key", "why"),
    [
        (lambda s: s["space"]["d_head"].update(low=64, high=64), "space.d_head", "empty range"),
        (lambda s: s["space"]["d_head"].update(low=2000), "space.d_head", "empty range"),
        (lambda s: s["space"].update(d_kk=s["space"].pop("d_head")), "space.d_kk", "unknown"),
        (lambda s: s["space"]["d_head"].update(low=0), "space.d_head", "log range"),
        (
            lambda s: s["space"]["d_head"].update(low=0, log=False),
            "space.d_head",
            "d_head=0, scale_scores=True makes an invalid variant: must be positive",
        ),
        (lambda s: s["space"]["scale_scores"].update(choices=[]), "space.scale_scores", "two"),
        (lambda s: s["space"]["d_head"].update(low="16"), "space.d_head", "valid integer"),
        (lambda s: s.update(variant="dk-7"), "variant", "no variant 'dk-7'"),
        (lambda s: s.update(space={}), "space", "at least 1 item"),
        (lambda s: s.update(budget=0), "budget", "greater than 0"),
        (lambda s: s["sampler"].update(type="random"), "sampler.type", "'tpe'"),
    ],
)
def test_a_bad_dk_study_is_refused_naming_its_key(edit, key, why):
    message = _refused(lambda p: edit(_dk(p)))
    assert f"{DK}.{key}" in message and why in message, message


def _reference(params: dict, study: str = "dk") -> dict:
    return params["sweeps"]["studies"][study]["references"][0]


@pytest.mark.parametrize(
    ("edit", "key", "why"),
    [
        (lambda p: _reference(p).update(d_head=2048), "dk.references[0].d_head", "2048 is outside"),
        (lambda p: _reference(p).update(d_head=32.0), "dk.references[0].d_head", "32.0 is outside"),
        (lambda p: _reference(p).update(scale_scores=1), "dk.references[0].scale_scores",
         "1 is outside the search space (choices: [True, False])"),
        (lambda p: _reference(p).update(lr=0.1), "dk.references[0].lr", "not a searched param"),
        (lambda p: _reference(p).pop("scale_scores"), "dk.references[0].scale_scores", "missing"),
        (lambda p: _dk(p)["references"].append(dict(_reference(p))), "dk.references[1]",
         "repeats references[0]"),
        (lambda p: _dk(p).update(trials=1, references=[{"d_head": 16, "scale_scores": True},
                                                       {"d_head": 17, "scale_scores": True}]),
         "dk.references", "2 reference trials do not fit in trials (1)"),
        (lambda p: _reference(p, "warmup").update(warmup_steps=225),
         "warmup.references[0].warmup_steps",
         "225 is outside the search space (low: 0, high: 500, step: 50"),
        (lambda p: _reference(p, "warmup").update(norm="none"), "warmup.references[0].norm",
         "'none' is outside"),
    ],
)  # fmt: skip
def test_a_reference_off_the_search_space_is_refused_naming_its_key(edit, key, why):
    message = _refused(edit)
    assert f"sweeps.studies.{key}: " in message and why in message, message


def test_a_head_count_that_does_not_divide_the_width_is_refused():
    def three_heads(params):
        params["sweeps"]["studies"]["warmup"]["space"]["n_head"]["choices"] = [1, 3, 4]

    message = _refused(three_heads)
    assert "sweeps.studies.warmup.space.n_head: " in message
    assert "n_head=3" in message and "not divisible" in message


def test_warmup_longer_than_training_names_the_warmup_axis():
    def long_warmup(params):
        params["sweeps"]["studies"]["warmup"]["space"]["warmup_steps"]["high"] = 1500

    message = _refused(long_warmup)
    assert "sweeps.studies.warmup.space.warmup_steps: warmup_steps=1050" in message
    assert "must not exceed steps (1000)" in message


def test_a_grace_period_shorter_than_the_heartbeat_is_refused():
    message = _refused(lambda p: p["runtime"]["sweeps"].update(grace_period_s=30))
    assert "grace_period_s (30) must exceed heartbeat_interval_s (60)" in message


def test_a_pruner_warm_up_that_outlasts_the_trials_is_refused():
    message = _refused(lambda p: _dk(p)["pruner"].update(warmup_steps=1500))
    assert f"{DK}.pruner.warmup_steps: 1500 steps" in message
    assert "shortest trial (1500 steps" in message


def test_storage_urls_env_over_params_over_the_journal_and_passwords_stay_hidden(tmp_path):
    default = tmp_path / "s.journal"
    assert storage_url(None, default, {}) == f"journal:///{default}"
    assert is_embedded(storage_url(None, default, {}))
    assert storage_url("sqlite:////x/y.db", default, {}) == "sqlite:////x/y.db"
    shared = "postgresql://me:secret@db.lan:5432/sweeps"
    url = storage_url("sqlite:////x/y.db", default, {STORAGE_ENV: shared})
    assert url == "postgresql+psycopg2://me:secret@db.lan:5432/sweeps"  # the pinned driver
    assert "secret" not in redact(url)


@pytest.mark.parametrize(
    ("edit", "key"),
    [
        (lambda dk: dk["space"]["d_head"].update(low=0), "space.d_head"),
        (lambda dk: dk["references"][0].update(d_head=4096), "references[0].d_head"),
    ],
)
def test_the_stage_refuses_bad_input_in_seconds_and_writes_nothing(sweep_project, edit, key):
    params = sweep_params()
    edit(params["sweeps"]["studies"]["dk"])
    project = sweep_project(f"bad-{key}", params)
    began = time.monotonic()
    script = project.root / "pipeline" / "sweep.py"  # what dvc.yaml runs
    done = subprocess.run(
        [sys.executable, str(script), "--study", "dk"],
        cwd=project.root,
        env=project.env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"error: sweeps.yaml is invalid:\n  sweeps.studies.dk.{key}: " in done.stderr
    assert "Traceback" not in done.stderr
    assert time.monotonic() - began < 60
    assert not (project.root / "data" / "sweeps").exists()
    assert not (project.root / "reports").exists()


def test_workers_on_one_sqlite_file_are_refused_before_any_trial(sweep_project):
    params = sweep_params(workers=2, storage="sqlite:///data/sweeps/dk.db")
    done = sweep_project("sqlite", params).run("sweep", "run", "--study", "dk")
    assert done.returncode == 2 and "sweeps.workers: 2 workers cannot share" in done.stderr


def test_a_worker_refuses_the_embedded_journal(sweep_project):
    project = sweep_project("worker", sweep_params())
    done = project.run("sweep", "worker", "dk")
    assert done.returncode == 2 and "ATTNLAB_OPTUNA_STORAGE" in done.stderr, done.stderr
    assert not (project.root / "data" / "sweeps").exists()


@pytest.mark.parametrize("scale", [1.0, 0.01, 0.37])
def test_a_trial_trains_the_schedule_a_run_of_its_variant_trains_at_the_studys_budget(scale):
    from attnlab.sweeps import Sweep
    from attnlab.training import TrainJob

    raw = copy.deepcopy(REAL_PARAMS)
    raw["budget"]["scale"] = scale
    params = parse_params(raw)
    warmup = Sweep("warmup", params)
    trial = warmup.trial_job(0, {"warmup_steps": 500, "norm": "post", "n_head": 8})
    at_study = params.model_copy(update={"budget": warmup.budget})
    run = TrainJob.from_variant(at_study, trial.variant)
    assert (trial.steps, trial.warmup_steps) == (run.steps, run.warmup_steps)
    steps = max(1, round(1000 * scale * warmup.study.budget))  # E11's 1000 steps, scaled
    assert trial.steps == steps
    assert trial.warmup_steps == min(steps, max(1, round(500 * scale * warmup.study.budget)))
