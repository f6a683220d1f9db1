"""A seed group's stage commands in warm forks (attnlab.fanout.warm_commands)."""

import json
import os
import signal
import sys
from pathlib import Path

import pytest

from attnlab.fanout.warm_commands import run_command

SCRIPT = """\
import json
import os
import sys

import colorsys  # a module of its own that the group imports before it forks

import attnlab.errors

seen = getattr(attnlab.errors, "left_by_an_earlier_command", None)
attnlab.errors.left_by_an_earlier_command = sys.argv[1]
with open(f"ran-{sys.argv[1]}.json", "w") as out:
    json.dump({"pid": os.getpid(), "argv": sys.argv, "seen": seen, "cwd": os.getcwd()}, out)
if sys.argv[1] == "fail":
    sys.exit(3)
if sys.argv[1] == "raise":
    raise RuntimeError("the stage broke")
if sys.argv[1] == "say":
    sys.exit("error: a message")
if sys.argv[1] == "killed":
    os.kill(os.getpid(), 15)
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pipeline").mkdir()
    (tmp_path / "pipeline" / "step.py").write_text(SCRIPT)
    # `python` on PATH is this interpreter, as in an activated environment.
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.chdir("/")  # the command runs in the project, wherever the group runs
    return tmp_path


def _ran(root: Path, name: str) -> dict:
    return json.loads((root / f"ran-{name}.json").read_text())


def test_each_command_runs_warm_in_a_process_of_its_own(project: Path):
    sys.modules.pop("colorsys", None)
    assert run_command("python pipeline/step.py first --flag", project) == 0
    assert run_command("python pipeline/step.py second", project) == 0
    first, second = _ran(project, "first"), _ran(project, "second")
    assert first["argv"] == ["pipeline/step.py", "first", "--flag"]
    assert first["cwd"] == str(project)
    # Its own pid, and nothing the earlier command set is left for the next.
    assert len({first["pid"], second["pid"], os.getpid()}) == 3
    assert first["seen"] is None and second["seen"] is None
    assert "colorsys" in sys.modules  # imported here once, before the forks
    # and what W&B and Lightning import lazily in every training stage
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


def test_any_other_command_runs_through_the_shell(project: Path):
    assert run_command("echo made > shell.txt && test -s shell.txt", project) == 0
    assert (project / "shell.txt").read_text() == "made\n"
    assert run_command("exit 4", project) == 4
    # Another environment's python (here: the base interpreter, without attnlab) is not
    # forked from this one: the command runs as DVC would run it.
    other = project / "other-env"
    other.mkdir()
    (other / "python").symlink_to(Path(sys.executable).resolve())
    (project / "pipeline" / "where.py").write_text(
        "import pathlib, sys\npathlib.Path('where.txt').write_text(sys.prefix)\n"
    )
    path = f"{other}{os.pathsep}{os.environ['PATH']}"
    assert run_command(f"PATH={path} python pipeline/where.py", project) == 0
    assert (project / "where.txt").read_text() != sys.prefix
