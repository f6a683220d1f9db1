"""The fan-out's safety: a stop leaves the work tree and dvc.lock whole, and so on.

It plans beside other DVC processes and from any folder; a second fan-out in the same
project is refused.

The stage is `probes`: real, a few seconds, with committed outputs that a rerun
reproduces byte for byte, so a clean `git status` means nothing was lost or left behind.
Byte for byte on one machine only: another CPU rounds the last digits of its floats
otherwise, so the tests first commit this machine's outputs (``probes_project``).
"""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest
import yaml
from zc.lockfile import LockError, LockFile

from attnlab.fanout import read_plan

OUTPUTS = "reports/metrics/probes"
EMPTY_LOCK = "schema: '2.0'\nstages: {}\n"  # what a project with no stage recorded holds


def _attnlab(project, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [str(Path(sys.executable).parent / "attnlab"), "repro", *args],
        cwd=project.root,
        env={**project.env, "WANDB_MODE": "disabled"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _wait_for(condition, what: str, timeout_s: float = 300) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _running(project) -> bool:
    log = project.root / ".dvc/tmp/attnlab-repro/probes.log"
    return log.exists() and "Running stage 'probes'" in log.read_text()


def _repo_lock(project) -> LockFile:
    """DVC's repository lock, as another DVC command takes it (waiting for a holder)."""
    (project.root / ".dvc/tmp").mkdir(exist_ok=True)
    while True:
        try:
            return LockFile(str(project.root / ".dvc/tmp/lock"))
        except LockError:  # a child holds it for a moment
            time.sleep(0.05)


@pytest.fixture
def probes_project(dvc_project):
    """``dvc_project`` with this machine's probe outputs committed, and the stage unrecorded.

    The stage's command runs on one torch thread, as the fan-out runs a stage (a place per
    core, a thread per place), and outside DVC, so dvc.lock stays empty.
    """
    one_thread = {**dvc_project.env, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    subprocess.run(
        [sys.executable, "pipeline/probes.py"],
        cwd=dvc_project.root,
        env=one_thread,
        check=True,
        capture_output=True,
    )
    dvc_project.run("git", "add", "-A", OUTPUTS, "reports/tables/probes", "reports/figures")
    dvc_project.run("git", "commit", "-qm", "this machine's probe outputs", "--allow-empty")
    return dvc_project


def _changed(project) -> list[str]:
    """The paths `git status` lists (new, deleted, modified or untracked)."""
    status = project.run("git", "status", "--porcelain", "--untracked-files=all").stdout
    return [line[3:] for line in status.splitlines()]


def test_a_plan_waits_while_another_dvc_process_rewrites_dvc_lock(dvc_project):
    # DVC rewrites dvc.lock under its repository lock: truncated first, then dumped.
    lock_file = dvc_project.root / "dvc.lock"
    held = _repo_lock(dvc_project)
    lock_file.write_text("")
    plans = []
    reader = threading.Thread(target=lambda: plans.append(read_plan(dvc_project.root, ["cost"])))
    reader.start()
    time.sleep(3)
    lock_file.write_text(EMPTY_LOCK)
    held.close()
    reader.join(timeout=120)
    assert plans and plans[0].order == ("cost",)  # read once DVC had written it whole


def test_a_plan_names_stages_from_the_root_wherever_it_runs(dvc_project, monkeypatch):
    monkeypatch.chdir(dvc_project.root / "reports" / "metrics")
    assert read_plan(dvc_project.root, ["cost"]).order == ("cost",)


@pytest.mark.slow
def test_ctrl_c_puts_back_a_stopped_stages_committed_outputs_and_a_second_run_is_refused(
    probes_project,
):
    first = _attnlab(probes_project, "probes")
    # DVC has deleted the committed outputs and runs the stage's command.
    _wait_for(
        lambda: _running(probes_project) and not (probes_project.root / OUTPUTS).exists(), "run"
    )
    second = _attnlab(probes_project, "probes")
    refused, _ = second.communicate(timeout=120)
    assert second.returncode == 2, refused
    assert refused.startswith(f"error: another attnlab repro (pid {first.pid}) is running")

    first.send_signal(signal.SIGINT)
    out, _ = first.communicate(timeout=300)
    assert first.returncode == 128 + signal.SIGINT, out
    assert "SIGINT: stopping 1 running stage(s)" in out
    assert f"from git: {OUTPUTS}, reports/tables/probes" in out, out
    assert _changed(probes_project) == []  # as found: nothing deleted, nothing half-written

    rerun = _attnlab(probes_project, "probes")
    out, _ = rerun.communicate(timeout=600)
    assert rerun.returncode == 0 and "probes: ran in " in out, out
    assert _changed(probes_project) == ["dvc.lock"]  # the same outputs, now recorded


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_stopped_set_param_run_puts_the_params_back_and_says_so(probes_project, signum):
    # Before, Ctrl-C on `attnlab repro -S ...` left the knob in the params file, silently:
    # the next plain run trained with it.
    knobs = probes_project.root / "probes.yaml"
    before = knobs.read_bytes()
    launcher = _attnlab(probes_project, "-S", "probes.yaml:probes.pairs=5000", "probes")
    _wait_for(lambda: _running(probes_project), "run")
    assert b"pairs: 5000" in knobs.read_bytes()  # the run uses the knob meanwhile
    launcher.send_signal(signum)
    out, _ = launcher.communicate(timeout=300)
    assert launcher.returncode == 128 + signum, out
    assert "-S not kept (no experiment saved): probes.yaml put back" in out, out
    assert knobs.read_bytes() == before
    assert _changed(probes_project) == []


@pytest.mark.slow
def test_a_failed_stage_gets_its_outputs_back_from_git_and_from_dvcs_cache(tokenized_project):
    project = tokenized_project
    tokens = sorted((project.root / "data/tokens").iterdir())
    before = {path.name: path.read_bytes() for path in tokens}
    # The stage fails half-way, having written part of its outputs.
    (project.root / "pipeline/tokenize_corpus.py").write_text(
        "from pathlib import Path\n"
        "Path('data/tokens').mkdir()\n"
        "Path('data/tokens/train.parquet').write_text('half')\n"
        "Path('reports/metrics/corpus.json').write_text('{')\n"
        "raise SystemExit(1)\n"
    )
    project.run("git", "commit", "-qam", "a tokenize stage that fails")
    params = (project.root / "params.yaml").read_bytes()
    launcher = _attnlab(project, "-S", "tokenize.val_fraction=0.2", "tokenize")
    out, _ = launcher.communicate(timeout=300)
    assert launcher.returncode == 1 and "tokenize: FAILED" in out, out
    assert "-S not kept (no experiment saved): params.yaml put back" in out, out
    assert (project.root / "params.yaml").read_bytes() == params
    assert "from git: reports/metrics/corpus.json" in out, out
    assert "from DVC's cache: data/tokens" in out, out
    assert _changed(project) == []
    assert {path.name: path.read_bytes() for path in tokens} == before


@pytest.mark.slow
def test_a_stop_while_dvc_records_a_finished_stage_lets_it_write_dvc_lock_whole(
    probes_project,
):
    launcher = _attnlab(probes_project, "probes")
    _wait_for(lambda: launcher.poll() is not None or psutil.Process(launcher.pid).children(), "DVC")
    dvc = psutil.Process(launcher.pid).children()[0]
    _wait_for(lambda: _running(probes_project) and dvc.children(), "the stage's command")
    # The command runs without the repository lock; DVC takes it back to record the
    # stage. Held here, DVC waits for it, in the middle of recording, when the stop comes.
    held = _repo_lock(probes_project)
    try:
        _wait_for(lambda: not dvc.children(), "the command to finish")
        os.kill(launcher.pid, signal.SIGINT)
        time.sleep(2)
        assert dvc.is_running()  # not cut short while it records
    finally:
        held.close()
    out, _ = launcher.communicate(timeout=300)
    assert launcher.returncode == 128 + signal.SIGINT, out
    assert "probes: ran in " in out, out
    recorded = yaml.safe_load((probes_project.root / "dvc.lock").read_text())["stages"]
    assert set(recorded) == {"probes"}
    assert _changed(probes_project) == ["dvc.lock"]
