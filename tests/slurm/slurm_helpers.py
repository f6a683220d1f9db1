"""What the SLURM tests share: the tiny budget, the launcher, and waiting on a run."""

import subprocess
import sys
import time
from pathlib import Path


def shrink(params: dict) -> None:
    """The fan-out tests' fastest budget, and jobs that fit the test node (2 CPUs, 4 GiB)."""
    params["budget"]["scale"] = 0.002
    params["model"]["d_model"] = 32
    params["train"]["batch_size"] = 8
    params["runtime"]["slurm"].update(cpus_per_job=1, mem_per_job="1G")


def attnlab_command() -> list[str]:
    """``attnlab repro`` of this environment."""
    return [str(Path(sys.executable).parent / "attnlab"), "repro"]


def start_launcher(project, *args: str) -> subprocess.Popen:
    """``attnlab repro --executor slurm args`` in the background, its output in one pipe."""
    return subprocess.Popen(
        [*attnlab_command(), "--executor", "slurm", *args],
        cwd=project.root,
        env=project.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def wait_for(condition, what: str, timeout_s: float = 300):
    """``condition()``'s first true value, polled every 0.2 s; a failure after timeout_s."""
    deadline = time.monotonic() + timeout_s
    while not (value := condition()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)
    return value
