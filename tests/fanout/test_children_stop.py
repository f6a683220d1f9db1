"""Stopping a child: SIGTERM to the stage under DVC, never to a helper in its own session."""

import json
import subprocess
import sys
import time

import psutil

from attnlab.fanout.children import Child

# Plays DVC: starts the stage command in its group, and the stage's W&B service, which
# W&B starts in a session of its own; waits for the command as DVC does, notes its status.
DVC = """
import json, subprocess, sys, time
sleep = [sys.executable, "-c", "import time; time.sleep(600)"]
stage = subprocess.Popen(sleep)
service = subprocess.Popen(sleep, start_new_session=True)
open(sys.argv[1], "w").write(json.dumps({"stage": stage.pid, "service": service.pid}))
open(sys.argv[2], "w").write(str(stage.wait()))
time.sleep(600)
"""


def test_a_stop_reaches_the_stage_command_and_spares_a_helper_in_its_own_session(tmp_path):
    # Before, the stop reached every descendant: W&B's service died first, and the stopped
    # trial's run teardown raised "Connection lost", which the sweep counted as a failure.
    pids, status = tmp_path / "pids.json", tmp_path / "stage-status"
    dvc = subprocess.Popen(
        [sys.executable, "-c", DVC, str(pids), str(status)], start_new_session=True
    )
    child = Child(("train@x-1337",), tmp_path / "log", None, 1, dvc)
    try:
        deadline = time.monotonic() + 60
        while not pids.exists() or not pids.read_text():
            assert time.monotonic() < deadline, "the stand-in for DVC never started its command"
            time.sleep(0.05)
        started = json.loads(pids.read_text())
        service = psutil.Process(started["service"])

        child.stop()

        while not status.exists() or not status.read_text():
            assert time.monotonic() < deadline, "the stage command outlived its SIGTERM"
            time.sleep(0.05)
        assert status.read_text() == "-15"  # ended by SIGTERM
        assert service.is_running() and service.status() != psutil.STATUS_ZOMBIE
        assert dvc.poll() is None  # DVC itself is left to end alone
    finally:
        for pid in json.loads(pids.read_text()).values() if pids.exists() else ():
            if psutil.pid_exists(pid):
                psutil.Process(pid).kill()
        dvc.kill()
        dvc.wait()
