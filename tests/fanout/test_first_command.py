"""The README's first command on a clone of a record, and a one-knob experiment's views.

The record is built here at a tiny budget (one variant, the maps' Winograd variant, no
sweeps), by the real fan-out, and committed; the committed budget-1.0 record is not used,
since any library change makes its stages stale.
"""

import csv
import io
import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from tiny_probes import shrink_probes

pytestmark = pytest.mark.slow

SEED = 1337  # the one seed the tests' project keeps
INPUTS = {"download", "bpe", "tokenize", "winograd-data"}
KNOB = "+variants.ladder-mlp.train.lr=0.002"
SHOW = "exp show --only-changed --drop '^(data|reports|src|pipeline)/|Created'"  # README's


def _tiny(params: dict) -> None:
    params["budget"]["scale"] = 0.002
    params["model"]["d_model"] = 32
    params["train"]["batch_size"] = 8
    params["variants"] = {"ladder-mlp": params["variants"]["ladder-mlp"]}
    params["extra_seeds"].update(seeds=[], variants=[], winograd_variants=[])  # its rows are cut
    params["aliases"] = {}
    params["sweeps"]["studies"] = {}
    winograd = params["winograd"]
    winograd["model"]["d_model"] = 16
    winograd["variants"] = {
        winograd["maps"]["variant"]: winograd["variants"][winograd["maps"]["variant"]]
    }
    shrink_probes(params)


def _attnlab(project, *args: str) -> str:
    done = project.run(str(Path(sys.executable).parent / "attnlab"), "repro", *args)
    return done.stdout


def _ran(out: str) -> set[str]:
    return {
        line.split("] ", 1)[1].split(":", 1)[0] for line in out.splitlines() if ": ran in " in line
    }


@pytest.fixture(scope="module")
def record(tmp_path_factory, copy_tokenized):
    """A tiny record: every stage of the shrunk pipeline run by the fan-out and committed."""
    project = copy_tokenized(tmp_path_factory.mktemp("record"))
    project.edit_params(_tiny)
    out = _attnlab(project, "--jobs", "2")
    assert f"train@ladder-mlp-{SEED}" in _ran(out) and "report" in _ran(out), out
    # Its training wrote offline W&B runs: the fan-out ends with the one command for all.
    last = out.rstrip().splitlines()[-1]
    assert last.startswith("W&B: 2 offline run(s) written; upload them all with: wandb sync "), out
    assert all(Path(folder).is_dir() for folder in last.split("wandb sync ", 1)[1].split()), last
    project.run("git", "add", "-A")
    project.run("git", "commit", "-qm", "the tiny record")
    return project


def test_the_first_command_on_a_clone_rebuilds_the_inputs_and_trains_nothing(record, tmp_path):
    clone = type(record)(tmp_path / "clone", record.env)
    record.run("git", "clone", "-q", str(record.root), str(clone.root))
    out = _attnlab(clone)  # the README's first command
    assert _ran(out) == INPUTS, out
    assert "0 stages to bring up to date" in out, out
    assert not (clone.root / f"data/models/ladder-mlp/seed-{SEED}").exists()
    assert clone.run("git", "status", "--porcelain").stdout == ""


def test_a_one_knob_experiment_shows_its_knob_and_results_in_few_columns(record):
    out = _attnlab(record, "-S", KNOB, "-n", "lr-2e-3", f"evaluate@ladder-mlp-{SEED}")
    assert {f"train@ladder-mlp-{SEED}", "charts", "report"} <= _ran(out), out
    shown = record.dvc("exp", "show", "--only-changed", "--csv").stdout
    header = next(csv.reader(io.StringIO(shown)))
    assert len(header) <= 30, header
    assert "variants.ladder-mlp.train.lr" in header and "ladder-mlp.val/ppl" in header, header

    diff = json.loads(record.dvc("metrics", "diff", "HEAD", "lr-2e-3", "--json").stdout)
    assert "ladder-mlp.val/ppl" in diff["reports/headline.json"], diff
    plots = json.loads(record.dvc("plots", "diff", "HEAD", "lr-2e-3", "--json").stdout)
    curves = {"HEAD": [], "lr-2e-3": []}
    for point in plots["data"]["reports/charts/E02-train-loss.csv"][0]["content"]["data"]["values"]:
        if point["variant"] == "ladder-mlp":
            curves[point["rev"]].append(point["loss"])
    assert curves["HEAD"] and curves["lr-2e-3"] and curves["HEAD"] != curves["lr-2e-3"]

    # The README's invocation fits a terminal of 160 columns (drawn here on a wider one).
    wide = {**record.env, "COLUMNS": "1000"}
    command = [sys.executable, "-m", "dvc", *shlex.split(SHOW), "--no-pager"]
    readme = subprocess.run(
        command, cwd=record.root, env=wide, capture_output=True, text=True
    ).stdout
    assert "ladder-mlp.val/ppl" in readme and max(map(len, readme.splitlines())) <= 160, readme


def test_the_first_command_asks_before_long_work_and_without_a_terminal_starts_none(
    record, tmp_path
):
    clone = type(record)(tmp_path / "clone", record.env)
    record.run("git", "clone", "-q", str(record.root), str(clone.root))
    # A record whose training is stale and predicted at days: its measured wall time,
    # what the forecast scales, edited by hand (the edit itself makes the stage stale).
    metrics = clone.root / f"reports/metrics/ladder-mlp/seed-{SEED}/train.json"
    measured = json.loads(metrics.read_text())
    metrics.write_text(json.dumps({**measured, "wall_s": 1e6}))
    attnlab = str(Path(sys.executable).parent / "attnlab")
    done = subprocess.run(  # no terminal: the prompt's answer is no
        [attnlab, "repro"],
        cwd=clone.root,
        env=clone.env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "the record is stale here: " in out and "nothing long was started" in out, out
    stale = f"  train: 1 stage (outputs changed: reports/metrics/ladder-mlp/seed-{SEED}/train.json"
    assert stale in out, out
    assert "attnlab repro --time-limit 2h" in out and "attnlab repro --yes" in out
    assert _ran(out) <= INPUTS | {"charts", "report"}, out  # the views, from what is current
    assert not (clone.root / f"data/models/ladder-mlp/seed-{SEED}").exists()
