"""Refuse a run whose model and batch cannot fit in this machine's memory, before allocating.

Serves every trained experiment of docs/catalogue.md (P0's train and evaluate stages). A
width or a batch size typed a few digits too long otherwise fails deep inside torch's
allocator with a traceback or, worse, slowly fills the machine's memory. The estimate
is a lower bound, so a refusal is never wrong: the fp32 weights (with their gradients and
Adam's two moments when training) and the (B, T, V) logits (with their gradient when
training), the largest activations of the models here. Only runs on the CPU are checked:
measuring a GPU's free memory would initialise CUDA in the stage's process, before
Lightning chooses how to start its workers. The memory available is the least of what the
machine has free and what the process's own limits leave it (``ulimit -v``, a cgroup's
memory limit): under a limit the allocator fails long before the machine runs short.
"""

import os
import resource
from pathlib import Path

import torch

from attnlab.architecture import ModelConfig
from attnlab.errors import AttnlabError
from attnlab.models.counting import count_parameters_by_formula

_FLOAT32 = 4
_GIB = 1 << 30


class InsufficientMemoryError(AttnlabError):
    """The run cannot fit in memory: the message names the params that size it."""


def needed_bytes(model: ModelConfig, batch_size: int, training: bool) -> int:
    """A lower bound on the memory of one step of ``model`` on ``batch_size`` windows.

    Training holds each weight four times (weight, gradient, Adam's two moments) and the
    logits twice (values and gradient); evaluation holds each once.
    """
    copies = 4 if training else 1
    parameters = count_parameters_by_formula(model)["total"]
    logits = batch_size * model.block_size * model.vocab_size  # (B, T, V)
    return _FLOAT32 * (copies * parameters + (2 if training else 1) * logits)


def memory_limits(cgroups: Path = Path("/sys/fs/cgroup")) -> dict[str, int]:
    """What each limit on this process leaves it, in bytes, by what the message calls it.

    The machine's (/proc/meminfo's MemAvailable, or free pages) always; the address
    space's soft limit (``RLIMIT_AS``, ``ulimit -v``) less what the process maps already,
    and its cgroup's memory limit less its usage (v2 ``memory.max``, v1
    ``memory.limit_in_bytes``, under ``cgroups``), where one is set.
    """
    limits = {"the machine's memory": _machine_available()}
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        limits["the address space (ulimit -v)"] = max(0, soft - _mapped_bytes())
    cgroup = _cgroup_available(cgroups)
    if cgroup is not None:
        limits["the cgroup's memory limit"] = cgroup
    return limits


def _machine_available() -> int:
    meminfo = Path("/proc/meminfo")
    if meminfo.is_file():
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024  # reported in kB
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def _mapped_bytes() -> int:
    """The process's virtual size (/proc/self/status VmSize), which RLIMIT_AS bounds."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    return 0


def _cgroup_available(cgroups: Path) -> int | None:
    """The limit of this process's memory cgroup less its usage; None when unlimited.

    /proc/self/cgroup names the cgroup (``0::/path`` on v2, ``N:memory:/path`` on v1);
    inside a container's namespace its path may not exist, and the mount's root is it.
    """
    try:
        entries = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for entry in entries:
        _, controllers, path = entry.split(":", 2)
        if controllers == "":
            found = _limit_less_usage(cgroups, path, "memory.max", "memory.current")
        elif "memory" in controllers.split(","):
            found = _limit_less_usage(
                cgroups / "memory", path, "memory.limit_in_bytes", "memory.usage_in_bytes"
            )
        else:
            continue
        if found is not None:
            return found
    return None


def _limit_less_usage(mount: Path, path: str, limit_file: str, usage_file: str) -> int | None:
    for folder in (mount / path.lstrip("/"), mount):
        try:
            limit = (folder / limit_file).read_text().strip()
            usage = int((folder / usage_file).read_text())
        except (OSError, ValueError):
            continue
        # v2 says "max"; v1 says a number near 2**63 (rounded to pages) when unlimited.
        if limit == "max" or int(limit) >= 1 << 62:
            return None
        return max(0, int(limit) - usage)
    return None


def runs_on_cpu(accelerator: str) -> bool:
    """Whether Lightning's ``accelerator`` (params ``trainer.accelerator``) means the CPU."""
    return accelerator == "cpu" or (accelerator == "auto" and not torch.cuda.is_available())


def check_fits_in_memory(
    model: ModelConfig, batch_size: int, batch_key: str, training: bool
) -> None:
    """Refuse, naming the params, a run on the CPU that cannot fit in the memory available.

    Args:
        model: the run's model (its width, depth, vocabulary and context size it).
        batch_size: windows per step (training) or per forward pass (evaluation).
        batch_key: the params key of ``batch_size``, for the message.
        training: whether gradients and the optimiser's state are held too.

    Raises:
        InsufficientMemoryError: the lower bound exceeds the memory available.
    """
    needed = needed_bytes(model, batch_size, training)
    limits = memory_limits()
    binding = min(limits, key=limits.__getitem__)
    available = limits[binding]
    if needed <= available:
        return
    parameters = count_parameters_by_formula(model)["total"]
    raise InsufficientMemoryError(
        f"model.d_model {model.d_model}, model.n_layer {model.n_layer}, {batch_key} "
        f"{batch_size}: {'training' if training else 'evaluating'} needs at least "
        f"{needed / _GIB:,.1f} GiB ({parameters:,} parameters, logits of {batch_size} x "
        f"{model.block_size} x {model.vocab_size}), but only {available / _GIB:,.1f} GiB of "
        f"memory is available (under {binding}); make the model or the batch smaller"
    )
