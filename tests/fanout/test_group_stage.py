"""A seed group's runner (attnlab.fanout.group_stage) against `dvc repro` on the same stages."""

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import run_dvc

from attnlab.fanout.children import runner_command
from attnlab.fanout.group_stage import reproduce_group

GROUP = ["count@beta-1", "count@beta-2"]


@pytest.fixture
def project(tiny_dvc_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    shutil.copytree(tiny_dvc_project, root)
    (root / "ran.log").unlink()
    monkeypatch.chdir(root)
    return root


def _ran(root: Path) -> list[str]:
    log = root / "ran.log"
    return log.read_text().splitlines() if log.exists() else []


def test_a_group_records_what_dvc_repro_records_stage_by_stage(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    (project / "params.yaml").write_text("scale: 0.75  # the knob\n")
    serial = tmp_path / "serial"
    shutil.copytree(project, serial)
    for stage in GROUP:
        run_dvc(serial, "repro", "--single-item", stage)

    assert reproduce_group(project, GROUP) == 0
    out = capsys.readouterr().out
    assert "Running stage 'count@beta-1':" in out and "Recorded 'count@beta-2' in dvc.lock" in out
    assert _ran(project) == ["out/beta-1.txt", "out/beta-2.txt"]
    assert (project / "dvc.lock").read_text() == (serial / "dvc.lock").read_text()
    # Up to date now: nothing runs, as DVC skips it.
    assert reproduce_group(project, GROUP) == 0
    assert "count@beta-1' didn't change, skipping" in capsys.readouterr().out
    assert len(_ran(project)) == 2


def _entry(root: Path, stage: str) -> dict:
    return yaml.safe_load((root / "dvc.lock").read_text())["stages"][stage]


def test_outputs_in_the_cache_are_checked_out_not_run_again(
    project: Path, caplog: pytest.LogCaptureFixture
):
    # DVC says so on its own logger (printed by a runner's process, as by dvc repro).
    recorded = _entry(project, "count@beta-1")
    # Only the output is missing: checked out as the stage's own lock entry names it.
    (project / "out" / "beta-1.txt").unlink()
    assert reproduce_group(project, ["count@beta-1"]) == 0
    assert "Stage 'count@beta-1' is cached - skipping run" in caplog.text
    assert _ran(project) == []
    assert (project / "out" / "beta-1.txt").read_text() == "beta"
    assert _entry(project, "count@beta-1") == recorded

    # An edit runs the group; its undo finds the first inputs in DVC's run cache.
    (project / "params.yaml").write_text("scale: 0.75  # the knob\n")
    assert reproduce_group(project, GROUP) == 0
    assert _ran(project) == ["out/beta-1.txt", "out/beta-2.txt"]
    (project / "params.yaml").write_text("scale: 0.5  # the knob\n")
    caplog.clear()
    assert reproduce_group(project, ["count@beta-1"]) == 0
    assert "Stage 'count@beta-1' is cached - skipping run" in caplog.text
    assert len(_ran(project)) == 2  # nothing ran
    assert _entry(project, "count@beta-1") == recorded


def test_the_fan_outs_command_runs_the_group_and_its_log_starts_with_dvcs_lines(project: Path):
    # Before, every group's log began with runpy's RuntimeWarning: the package had imported
    # the runner before `python -m` ran it.
    (project / "params.yaml").write_text("scale: 0.75  # the knob\n")
    done = subprocess.run(runner_command(GROUP), cwd=project, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr, done.stderr
    assert "Running stage 'count@beta-1':" in done.stdout
    assert _ran(project) == ["out/beta-1.txt", "out/beta-2.txt"]
