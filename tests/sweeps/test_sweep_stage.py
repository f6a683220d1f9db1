"""The real ``dvc repro sweep@dk`` in a throw-away clone, on the embedded journal study."""

import csv
import json

import optuna
import pytest
import yaml
from optuna.storages.journal import JournalFileBackend, JournalStorage
from optuna.trial import TrialState
from sweep_helpers import sweep_params

from attnlab.sweeps.results import FIGURES

pytestmark = pytest.mark.slow


def test_repro_runs_the_study_writes_its_reports_and_then_has_nothing_to_do(tokenized_project):
    dvc_project = tokenized_project  # the data stages recorded: tests/data runs them
    dvc_project.edit_params(lambda params: params.update(sweep_params(trials=4, steps=8)))
    first = dvc_project.dvc("repro", "sweep@dk")
    assert dvc_project.ran_stages(first.stdout) == ["sweep@dk"]

    root = dvc_project.root
    folder = root / "reports" / "sweeps" / "dk"
    rows = list(csv.DictReader((folder / "trials.csv").open()))
    finished = [r for r in rows if r["state"] in ("COMPLETE", "PRUNED")]
    assert len(finished) == 4 and [int(r["number"]) for r in rows] == list(range(len(rows)))
    assert all(r["wandb_run_id"] for r in finished)  # W&B offline, one run a trial
    best = json.loads((folder / "best.json").read_text())
    assert best["val/ppl"] == min(float(r["value"]) for r in rows if r["state"] == "COMPLETE")
    assert set(best["params"]) == {"d_head", "scale_scores"}
    assert best["trials"]["target"] == 4 and best["protocol"]["steps_per_trial"] == 8
    for name in FIGURES:
        assert (folder / "figures" / name).stat().st_size > 1000

    journal = JournalStorage(JournalFileBackend(str(root / "data" / "sweeps" / "dk.journal")))
    study = optuna.load_study(study_name="sweep-dk", storage=journal)
    assert len(study.get_trials(states=(TrialState.COMPLETE, TrialState.PRUNED))) == 4
    assert "sweep@dk" in yaml.safe_load((root / "dvc.lock").read_text())["stages"]

    again = dvc_project.dvc("repro", "sweep@dk")
    assert dvc_project.ran_stages(again.stdout) == []
    # A record with strings and tables, not a DVC metric; its best val/ppl is in the headline.
    shown = dvc_project.dvc("metrics", "show", "--json")
    assert "reports/sweeps/dk/best.json" not in shown.stdout
