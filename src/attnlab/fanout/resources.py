"""How many stages run at once, on how many threads each, and on which GPU.

Serves the fan-out of the whole catalogue. On a CPU, one stage per core with one torch
thread each: two one-thread processes out-train one two-thread process (PERFORMANCE.md,
x1.10), and jobs x threads never exceeds the cores, so no OpenMP team spins against
another. On GPUs, each visible device takes ``per_device`` stages at once (one of
docs/catalogue.md's small models leaves most of an accelerator idle), and the host's cores
are shared out among all of them.

Everything here is pure: the cores and devices are passed in, and a child's settings are
an environment mapping, so the device assignment is tested without a GPU.
"""

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from attnlab.errors import AttnlabError
from attnlab.fanout.mps import client_device

# The environment variables that size a child's thread pools when torch loads: OpenMP's
# (torch's intra-op pool) and MKL's own, which may otherwise start one thread per core.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")
DEVICES_VARIABLE = "CUDA_VISIBLE_DEVICES"


@dataclass(frozen=True)
class Resources:
    """What each concurrent stage gets.

    Attributes:
        jobs: Stages that run at once.
        threads: Torch threads per stage (jobs x threads <= cores).
        devices: The GPU ids stages are spread over; empty on a CPU-only machine.
        per_device: Stages that share one GPU at once.
        renumbered: Each stage names its GPU by its place among ``devices``, as an MPS
            server renumbers the devices its control daemon sees
            (:func:`~attnlab.fanout.mps.client_device`).
    """

    jobs: int
    threads: int
    devices: tuple[str, ...] = ()
    per_device: int = 1
    renumbered: bool = False

    def pick_device(self, busy: Mapping[str, int]) -> str | None:
        """The least busy GPU with a free place (ties: the first listed), or None on CPU.

        Args:
            busy: Running stages per device id.

        Raises:
            AttnlabError: every device already runs ``per_device`` stages (the caller
                starts no more than ``jobs`` at once, so this is a scheduling bug).
        """
        if not self.devices:
            return None
        device = min(self.devices, key=lambda d: busy.get(d, 0))
        if busy.get(device, 0) >= self.per_device:
            raise AttnlabError(f"every GPU already runs {self.per_device} stages")
        return device

    def child_environment(self, base: Mapping[str, str], device: str | None) -> dict[str, str]:
        """``base`` with this stage's thread count and, on a GPU, its one visible device."""
        env = dict(base)
        for name in THREAD_VARIABLES:
            env[name] = str(self.threads)
        if device is not None:
            env[DEVICES_VARIABLE] = (
                client_device(device, self.devices) if self.renumbered else device
            )
        return env


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, else the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def visible_devices(environ: Mapping[str, str], listed: Sequence[str] | None = None) -> list[str]:
    """The GPU ids a stage may be given.

    ``CUDA_VISIBLE_DEVICES`` wins when it is set (an empty value means no GPU); otherwise
    ``listed``, the ids the driver reports (see :func:`driver_devices`).
    """
    if DEVICES_VARIABLE in environ:
        return [part.strip() for part in environ[DEVICES_VARIABLE].split(",") if part.strip()]
    return list(listed or ())


def driver_devices() -> list[str]:
    """The GPU indices ``nvidia-smi`` lists; none without it (no torch import: it is slow)."""
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        done = subprocess.run(
            ["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    if done.returncode != 0:
        return []
    return [line.strip() for line in done.stdout.splitlines() if line.strip()]


def plan_resources(
    cores: int, devices: Sequence[str], jobs: int | None = None, per_device: int = 4
) -> Resources:
    """Share ``cores`` and ``devices`` among concurrent stages.

    Args:
        cores: CPU cores available.
        devices: Visible GPU ids (empty: CPU only).
        jobs: Stages at once; None means what the hardware allows: one per core on a
            CPU, ``per_device`` per GPU on GPUs. On GPUs it is capped at
            ``len(devices) x per_device``.
        per_device: Stages that share one GPU.

    Raises:
        AttnlabError: ``jobs`` or ``per_device`` is below 1.
    """
    if jobs is not None and jobs < 1:
        raise AttnlabError(f"--jobs must be at least 1, not {jobs}")
    if per_device < 1:
        raise AttnlabError(f"--per-device must be at least 1, not {per_device}")
    if devices:
        places = len(devices) * per_device
        jobs = places if jobs is None else min(jobs, places)
    elif jobs is None:
        jobs = cores
    return Resources(
        jobs=jobs,
        threads=max(1, cores // jobs),
        devices=tuple(devices),
        per_device=per_device,
    )
