"""A seed group's stage commands in warm forks (attnlab.fanout.warm_commands)."""

import json
import os
import signal
import sys
from pathlib import Path

import pytest

from attnlab.fanout.warm_commands import run_command, stage_call

# A stage script as pipeline/ holds them, and the command module it runs.
SCRIPT = '''"""A stage."""

from attnlab.stages.command import run_stage
from warm_probe_stage import main

if __name__ == "__main__":
    run_stage(main)
'''
COMMAND = '''"""What the probe stage does: note where it ran, then end as its word says."""

import json
import os
import sys

import attnlab.errors


def main(word: str, flag: bool = False) -> None:
    seen = getattr(attnlab.errors, "left_by_an_earlier_command", None)
    attnlab.errors.left_by_an_earlier_command = word
    noted = {"pid": os.getpid(), "argv": sys.argv, "seen": seen, "cwd": os.getcwd()}
    with open(f"ran-{word}.json", "w") as out:
        json.dump({**noted, "flag": flag}, out)
    if word == "fail":
        sys.exit(3)
    if word == "raise":
        raise RuntimeError("the stage broke")
    if word == "say":
        sys.exit("error: a message")
    if word == "killed":
        os.kill(os.getpid(), 15)
'''


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    (root / "pipeline").mkdir(parents=True)
    (root / "pipeline" / "step.py").write_text(SCRIPT)
    modules = tmp_path / "modules"
    modules.mkdir()
    (modules / "warm_probe_stage.py").write_text(COMMAND)
    monkeypatch.syspath_prepend(str(modules))
    monkeypatch.setenv("PYTHONPATH", f"{modules}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    monkeypatch.delitem(sys.modules, "warm_probe_stage", raising=False)
    # `python` on PATH is this interpreter, as in an activated environment.
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.chdir("/")  # the command runs in the project, wherever the group runs
    return root


def _ran(root: Path, name: str) -> dict:
    return json.loads((root / f"ran-{name}.json").read_text())


def test_each_command_runs_warm_in_a_process_of_its_own(project: Path):
    assert run_command("python pipeline/step.py first --flag", project) == 0
    assert run_command("python pipeline/step.py second", project) == 0
    first, second = _ran(project, "first"), _ran(project, "second")
    assert first["argv"] == ["pipeline/step.py", "first", "--flag"] and first["flag"]
    assert first["cwd"] == str(project) and not second["flag"]
    # Its own pid, and nothing the earlier command set is left for the next.
    assert len({first["pid"], second["pid"], os.getpid()}) == 3
    assert first["seen"] is None and second["seen"] is None
    # The stage's module was imported here once, before the forks, and so was what W&B
    # and Lightning import lazily in every training stage.
    assert "warm_probe_stage" in sys.modules
    assert {"wandb.sdk.launch._launch_add", "omegaconf"} <= set(sys.modules)


def test_exit_statuses_are_those_of_the_command_run_alone(
    project: Path, capfd: pytest.CaptureFixture[str]
):
    assert run_command("python pipeline/step.py fail", project) == 3
    assert run_command("python pipeline/step.py raise", project) == 1
    assert "RuntimeError: the stage broke" in capfd.readouterr().err
    assert run_command("python pipeline/step.py say", project) == 1
    assert "error: a message" in capfd.readouterr().err
    assert run_command("python pipeline/step.py killed", project) == -signal.SIGTERM


def test_only_a_stage_script_run_by_this_environment_runs_warm(project: Path):
    assert stage_call("python pipeline/step.py first", project) is not None
    # Any other script runs through the shell, as DVC runs it.
    other = project / "pipeline" / "other.py"
    other.write_text("import os, pathlib\npathlib.Path('other.txt').write_text(str(os.getpid()))\n")
    assert stage_call("python pipeline/other.py", project) is None
    assert run_command("python pipeline/other.py", project) == 0
    assert (project / "other.txt").read_text() != str(os.getpid())
    assert run_command("echo made > shell.txt && test -s shell.txt", project) == 0
    assert (project / "shell.txt").read_text() == "made\n"
    assert run_command("exit 4", project) == 4
    # Another environment's python (here: the base interpreter, without attnlab).
    elsewhere = project / "other-env"
    elsewhere.mkdir()
    (elsewhere / "python").symlink_to(Path(sys.executable).resolve())
    path = f"{elsewhere}{os.pathsep}{os.environ['PATH']}"
    os.environ["PATH"] = path  # restored by the fixture's monkeypatch
    assert stage_call("python pipeline/step.py first", project) is None
