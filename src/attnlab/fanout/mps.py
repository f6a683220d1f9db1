"""NVIDIA's Multi-Process Service for a fan-out's stages that share a GPU.

Serves the whole catalogue on GPUs (``attnlab repro --mps``). Several stages share each
device (:mod:`~attnlab.fanout.resources`, ``--per-device``); without MPS the GPU runs one
process's kernels at a time, and one small model of the catalogue leaves most of a large
GPU idle. MPS funnels every process's kernels through one server per device, so they run
at once (on one H200, 18 stages of the record in 4 min 49 s with ten at a time).

The decision, the environment the daemon and the stages get and the command lines are
pure functions here, tested without a GPU; :func:`mps_daemon` is the thin wrapper that
starts the control daemon for one run and stops it at the end, whatever ends the run.
MPS changes only how fast kernels run, never what they compute: where it cannot start,
the run says why in one line and goes on without it.
"""

import contextlib
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TextIO

import psutil

CONTROL = "nvidia-cuda-mps-control"
PIPE_VARIABLE = "CUDA_MPS_PIPE_DIRECTORY"  # the daemon's and its clients' sockets
LOG_VARIABLE = "CUDA_MPS_LOG_DIRECTORY"  # control.log and server.log
PID_FILE = "nvidia-cuda-mps-control.pid"  # the daemon writes it into its pipe directory
START_S = 60  # the daemon forks into the background at once; a minute is a hung driver
STOP_S = 60  # after `quit` the daemon waits for its servers to exit


# `--mps`: `off` never starts a daemon; `on` does, saying why not where it cannot; `auto`
# does where it can, saying nothing on a machine with no GPU.
MpsMode = Literal["off", "on", "auto"]


@dataclass(frozen=True)
class MpsDecision:
    """Whether a run starts its own MPS control daemon, and the line it says about it.

    Attributes:
        control: The ``nvidia-cuda-mps-control`` to start; None: no daemon for this run.
        note: One line for the user (why it does not start), or None: nothing to say.
    """

    control: str | None = None
    note: str | None = None


def decide(
    mode: MpsMode, devices: Sequence[str], control: str | None, environ: Mapping[str, str]
) -> MpsDecision:
    """Whether to start MPS for a run, from what the machine has.

    Args:
        mode: The ``--mps`` choice.
        devices: The GPUs the stages are given (empty: CPU only).
        control: Where ``nvidia-cuda-mps-control`` is (``shutil.which``), or None.
        environ: The run's environment; a ``CUDA_MPS_PIPE_DIRECTORY`` in it names a daemon
            the user runs, which the stages then use as it is.
    """
    if mode == "off":
        return MpsDecision()
    if not devices:
        # `auto` is what a script shared by a laptop and a GPU machine says: quiet here.
        why = "MPS: not started: no CUDA device is visible (CUDA_VISIBLE_DEVICES, nvidia-smi)"
        return MpsDecision(note=why if mode == "on" else None)
    if environ.get(PIPE_VARIABLE):
        return MpsDecision(
            note=f"MPS: not started: the stages use the daemon of {PIPE_VARIABLE}="
            f"{environ[PIPE_VARIABLE]}"
        )
    if control is None:
        return MpsDecision(
            note=f"MPS: not started: {CONTROL} is not on PATH (it comes with NVIDIA's "
            f"driver); the {len(devices)} GPU(s) run one stage's kernels at a time"
        )
    return MpsDecision(control)


def mps_environment(base: Mapping[str, str], pipe: Path, log: Path) -> dict[str, str]:
    """``base`` with the daemon's pipe and log folders: what the daemon and the stages get.

    The daemon keeps the user's ``CUDA_VISIBLE_DEVICES``: it serves those devices, which
    its servers renumber from 0 for the stages (:func:`client_device`).
    """
    return {**base, PIPE_VARIABLE: str(pipe), LOG_VARIABLE: str(log)}


def client_device(device: str, devices: Sequence[str]) -> str:
    """A stage's ``CUDA_VISIBLE_DEVICES`` under MPS: its device's place among ``devices``.

    An MPS server renumbers the devices its control daemon sees: with "2,3" visible to the
    daemon, a client sees them as 0 and 1, and a client that asks for device 3 fails
    (NVIDIA's MPS guide, CUDA_VISIBLE_DEVICES). Without it set, the daemon sees every
    device in the driver's order and each place is the device's own index.
    """
    return str(devices.index(device))


def start_command(control: str) -> list[str]:
    """The command that starts the control daemon in the background."""
    return [control, "-d"]


def stop_command(control: str) -> tuple[list[str], str]:
    """The command, and what it reads on stdin, that shuts the daemon and its servers down."""
    return [control], "quit\n"


def stop_line(pipe: Path) -> str:
    """The shell command that stops the daemon by hand (a run killed with SIGKILL)."""
    return f"{PIPE_VARIABLE}={pipe} sh -c 'echo quit | {CONTROL}'"


@contextlib.contextmanager
def mps_daemon(
    decision: MpsDecision, environ: Mapping[str, str], log: Path, out: TextIO
) -> Iterator[dict[str, str] | None]:
    """Run the block with an MPS control daemon of its own, when ``decision`` says so.

    Yields the environment the stages get (:func:`mps_environment`), or None when no
    daemon runs (``decision``'s note, or why the daemon did not start, is said). The pipe
    folder is a new one under the system's temporary folder (a socket's path must stay
    short); the log folder is ``log``, kept after the run. The daemon is stopped when the
    block ends, by an error or Ctrl-C too.
    """
    if decision.control is None:
        if decision.note:
            print(decision.note, file=out, flush=True)
        yield None
        return
    pipe = Path(tempfile.mkdtemp(prefix="attnlab-mps-"))
    log.mkdir(parents=True, exist_ok=True)
    env = mps_environment(environ, pipe, log)
    failure = "interrupted while it started"
    try:
        failure = _run(start_command(decision.control), env, START_S)
        if failure:
            print(f"MPS: not started: {failure}; see {log}", file=out, flush=True)
            yield None
        else:
            print(
                f"MPS: control daemon started for this run, log in {log} "
                f"(should the run be killed, stop it with: {stop_line(pipe)})",
                file=out,
                flush=True,
            )
            yield env
    finally:
        # A daemon interrupted half-way through its start may have written its pid.
        if not failure or (pipe / PID_FILE).exists():
            _stop(decision.control, env, pipe, out)
        else:
            shutil.rmtree(pipe, ignore_errors=True)


def _run(command: list[str], env: Mapping[str, str], timeout_s: float, stdin: str = "") -> str:
    """Run ``command``; '' when it succeeded, else one line on why not.

    Its output goes to a file, not a pipe: a daemon that kept the pipe open would hold
    the wait until the timeout.
    """
    with tempfile.TemporaryFile("w+") as said:
        try:
            done = subprocess.run(
                command,
                input=stdin,
                env=env,
                stdout=said,
                stderr=said,
                text=True,
                timeout=timeout_s,
            )
        except (OSError, subprocess.SubprocessError) as err:
            return f"{' '.join(command)}: {err}"
        said.seek(0)
        last = said.read().strip().splitlines()[-1:]
    if done.returncode == 0:
        return ""
    return f"{' '.join(command)} exited {done.returncode}" + "".join(f": {line}" for line in last)


def _stop(control: str, env: Mapping[str, str], pipe: Path, out: TextIO) -> None:
    """Send ``quit``, wait for the daemon to exit, remove its pipes; say if it stays."""
    pid_file = pipe / PID_FILE
    pid = int(pid_file.read_text().strip() or 0) if pid_file.is_file() else 0
    command, stdin = stop_command(control)
    failure = _run(command, env, STOP_S, stdin)
    deadline = time.monotonic() + STOP_S
    while not failure and pid and psutil.pid_exists(pid):
        if time.monotonic() > deadline:
            failure = f"the daemon (pid {pid}) still runs {STOP_S} s after quit"
        time.sleep(0.2)
    if failure:
        print(f"MPS: not stopped: {failure}; stop it with: {stop_line(pipe)}", file=out)
        return
    shutil.rmtree(pipe, ignore_errors=True)
    print("MPS: control daemon stopped", file=out, flush=True)
