"""``attnlab repro --mps``: when the MPS daemon starts, and what the daemon and stages get.

The decision, the environments and the command lines are pure and run here without a
GPU; so does the whole run-time path of a machine with none, which says why in one line.
"""

import dataclasses
import inspect
import io
from pathlib import Path
from typing import get_args

from attnlab.cli import repro_command
from attnlab.fanout import _served, plan_resources
from attnlab.fanout.mps import (
    CONTROL,
    LOG_VARIABLE,
    PIPE_VARIABLE,
    MpsDecision,
    MpsMode,
    client_device,
    decide,
    mps_daemon,
    mps_environment,
    start_command,
    stop_command,
    stop_line,
)

BINARY = "/usr/bin/nvidia-cuda-mps-control"


def test_off_never_starts_and_says_nothing():
    assert decide("off", ["0"], BINARY, {}) == MpsDecision()


def test_a_gpu_and_the_control_binary_start_the_daemon_under_on_and_auto():
    assert decide("on", ["0", "1"], BINARY, {}) == MpsDecision(BINARY)
    assert decide("auto", ["0"], BINARY, {}) == MpsDecision(BINARY)


def test_without_a_gpu_on_says_why_in_one_line_and_auto_stays_quiet():
    said = decide("on", [], BINARY, {})
    assert said.control is None and "no CUDA device is visible" in said.note
    assert "\n" not in said.note
    assert decide("auto", [], None, {}) == MpsDecision()


def test_without_the_control_binary_both_say_so_and_run_without_it():
    for mode in ("on", "auto"):
        said = decide(mode, ["0"], None, {})
        assert said.control is None
        assert said.note.startswith(f"MPS: not started: {CONTROL} is not on PATH")


def test_a_daemon_the_user_runs_is_used_as_it_is():
    said = decide("on", ["0"], BINARY, {PIPE_VARIABLE: "/tmp/my-mps"})
    assert said.control is None and "/tmp/my-mps" in said.note


def test_the_daemon_and_the_stages_get_its_pipe_and_log_folders_and_nothing_else_changes():
    base = {"PATH": "/bin", "CUDA_VISIBLE_DEVICES": "2,3"}
    env = mps_environment(base, Path("/tmp/attnlab-mps-x"), Path("/p/.dvc/tmp/mps"))
    assert env == {
        **base,
        PIPE_VARIABLE: "/tmp/attnlab-mps-x",
        LOG_VARIABLE: "/p/.dvc/tmp/mps",
    }
    assert base == {"PATH": "/bin", "CUDA_VISIBLE_DEVICES": "2,3"}


def test_under_mps_a_stage_names_its_gpu_as_the_server_renumbers_them():
    # The daemon sees CUDA_VISIBLE_DEVICES=2,3 (or two UUIDs): its clients see 0 and 1.
    assert client_device("3", ["2", "3"]) == "1"
    assert client_device("GPU-b", ["GPU-a", "GPU-b"]) == "1"
    resources = plan_resources(8, ["2", "3"], per_device=2)
    assert resources.child_environment({}, "3")["CUDA_VISIBLE_DEVICES"] == "3"
    renumbered = dataclasses.replace(resources, renumbered=True)
    assert renumbered.child_environment({}, "3")["CUDA_VISIBLE_DEVICES"] == "1"


def test_the_command_lines_start_in_the_background_and_quit_on_stdin():
    assert start_command(BINARY) == [BINARY, "-d"]
    assert stop_command(BINARY) == ([BINARY], "quit\n")
    line = stop_line(Path("/tmp/attnlab-mps-x"))
    assert line == f"{PIPE_VARIABLE}=/tmp/attnlab-mps-x sh -c 'echo quit | {CONTROL}'"


def test_no_daemon_yields_no_environment_and_says_the_note_once(tmp_path):
    out = io.StringIO()
    with mps_daemon(MpsDecision(note="MPS: not started: why"), {}, tmp_path / "log", out) as env:
        assert env is None
    assert out.getvalue() == "MPS: not started: why\n"
    assert not (tmp_path / "log").exists()


def test_on_a_machine_without_a_gpu_the_run_goes_on_as_it_was_and_says_why(tmp_path):
    resources, environ, out = plan_resources(2, []), {"PATH": "/bin"}, io.StringIO()
    with _served("on", tmp_path, environ, resources, out) as (served, given):
        assert served == environ and given == resources
    assert out.getvalue().startswith("MPS: not started: no CUDA device is visible")
    quiet = io.StringIO()
    with _served("auto", tmp_path, environ, resources, quiet):
        pass
    assert quiet.getvalue() == ""


def test_the_command_line_offers_exactly_the_modes():
    annotation = inspect.signature(repro_command).parameters["mps"].annotation
    assert get_args(get_args(annotation)[0]) == get_args(MpsMode)
