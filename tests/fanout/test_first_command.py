"""The README's first command on a clone of a record, and its first hour, command by command.

The record is built here at a tiny budget (two variants, the maps' Winograd variant, no
sweeps), by the real fan-out, and committed; the committed budget-1.0 record is not used,
since any library change makes its stages stale.
"""

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from readme_commands import bash_commands, section
from tiny_probes import shrink_probes

pytestmark = pytest.mark.slow

SEED = 1337  # the one seed the tests' project keeps
INPUTS = {"download", "bpe", "tokenize", "winograd-data"}
OTHER = "ladder-average"  # a variant the README's one-knob experiment does not run


def _tiny(params: dict) -> None:
    params["budget"]["scale"] = 0.002
    params["model"]["d_model"] = 32
    params["train"]["batch_size"] = 8
    params["variants"] = {name: params["variants"][name] for name in ("ladder-mlp", OTHER)}
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
    assert last.startswith("W&B: 3 offline run(s) written; upload them all with: wandb sync "), out
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


def test_the_readmes_first_hour_runs_as_written_and_compares_in_few_rows(record):
    commands = bash_commands(section("The first hour"))
    attnlab_bin = Path(sys.executable).parent
    # In a shell, as typed; a terminal as wide as the views want (DVC fits its table to it).
    path = f"{attnlab_bin}{os.pathsep}{record.env.get('PATH', os.defpath)}"
    env = {**record.env, "PATH": path, "COLUMNS": "1000"}
    done = {}
    for command in commands:
        run = subprocess.run(
            ["bash", "-c", command], cwd=record.root, env=env, capture_output=True, text=True
        )
        assert run.returncode == 0, (command, run.stdout + run.stderr)
        done[command] = run.stdout
        if command.startswith("git"):  # the way back leaves the record as it was
            status = record.run("git", "status", "--porcelain", "--untracked-files=all")
            assert status.stdout == "", command

    def out(start: str) -> str:
        return next(text for command, text in done.items() if command.startswith(start))

    knob = next(c for c in commands if c.startswith("attnlab repro -S"))
    name = shlex.split(knob)[shlex.split(knob).index("-n") + 1]
    assert {f"train@ladder-mlp-{SEED}", "charts", "report"} <= _ran(out(knob)), out(knob)
    assert f"the work tree holds experiment {name} (budget.scale=" in out(knob), out(knob)

    # One knob, one row; only the rows of the variant it ran (and the claims it moved).
    params = out("dvc params diff").strip().splitlines()
    assert len(params) == 2 and "budget.scale" in params[1], params  # its header, the knob
    metrics = json.loads(record.dvc("metrics", "diff", "HEAD", name, "--json").stdout)
    changed = set(metrics["reports/headline.json"])
    assert "ladder-mlp.val/ppl" in changed, changed
    assert all(key.startswith(("ladder-mlp.", "claims.")) for key in changed), changed
    assert OTHER not in out("dvc metrics diff"), out("dvc metrics diff")

    show = next(c for c in commands if c.startswith("dvc exp show"))
    assert max(map(len, out(show).splitlines())) <= 160, out(show)
    assert "budget.scale" in out(show) and "ladder-mlp.val/ppl" in out(show), out(show)
    csv_argv = [str(attnlab_bin / "dvc"), *shlex.split(show)[1:], "--csv"]
    as_csv = subprocess.run(csv_argv, cwd=record.root, env=env, capture_output=True, text=True)
    columns = as_csv.stdout.splitlines()[0].split(",")
    assert len(columns) <= 30 and not any(OTHER in column for column in columns), columns

    plots = json.loads(record.dvc("plots", "diff", "HEAD", name, "--json").stdout)
    curves = {"HEAD": [], name: []}
    for point in plots["data"]["reports/charts/E02-train-loss.csv"][0]["content"]["data"]["values"]:
        if point["variant"] == "ladder-mlp":
            curves[point["rev"]].append(point["loss"])
    assert curves["HEAD"] and curves[name] and curves["HEAD"] != curves[name]
    assert (record.root / "dvc_plots/index.html").is_file()


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
