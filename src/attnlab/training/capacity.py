"""Refuse a run whose model and batch cannot fit in this machine's memory, before allocating.

Serves every trained experiment of docs/catalogue.md (P0's train and evaluate stages). A
width or a batch size typed a few digits too long otherwise fails deep inside torch's
allocator with a traceback or, worse, slowly fills the machine's memory. The estimate
is a lower bound, so a refusal is never wrong: the fp32 weights (with their gradients and
Adam's two moments when training) and the (B, T, V) logits (with their gradient when
training), the largest activations of the models here. Only runs on the CPU are checked:
measuring a GPU's free memory would initialise CUDA in the stage's process, before
Lightning chooses how to start its workers.
"""

import os
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


def available_bytes() -> int:
    """The memory this process can still take: /proc/meminfo's MemAvailable, or free pages."""
    meminfo = Path("/proc/meminfo")
    if meminfo.is_file():
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024  # reported in kB
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


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
    needed, available = needed_bytes(model, batch_size, training), available_bytes()
    if needed <= available:
        return
    parameters = count_parameters_by_formula(model)["total"]
    raise InsufficientMemoryError(
        f"model.d_model {model.d_model}, model.n_layer {model.n_layer}, {batch_key} "
        f"{batch_size}: {'training' if training else 'evaluating'} needs at least "
        f"{needed / _GIB:,.1f} GiB ({parameters:,} parameters, logits of {batch_size} x "
        f"{model.block_size} x {model.vocab_size}), but only {available / _GIB:,.1f} GiB of "
        "memory is available; make the model or the batch smaller"
    )
