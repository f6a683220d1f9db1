"""Which kernels a training step runs: PyTorch's eager ones or ``torch.compile``'s.

``torch.compile`` fuses the step's element-wise work (the softmax, the LayerNorms, GELU,
the loss) into generated kernels and computes the same float32 numbers to round-off
(``benchmarks/kernels.py`` measures both the speed and the loss curves' agreement). It
needs a code generator: a C++ compiler on the CPU, Triton on a GPU. Its first step
compiles for tens of seconds, which a long run repays and a 30-step run does not, so
``trainer.compile: auto`` compiles a run of at least ``trainer.compile_min_steps`` steps
when a one-line probe compiles here, and runs eagerly otherwise; ``true`` insists (and
refuses to start without a working compiler), ``false`` never compiles.
"""

from collections.abc import Callable
from functools import cache

import torch

from attnlab.config.training import TrainerParams
from attnlab.errors import ParamsError

StepLoss = Callable[..., torch.Tensor]


def compiles_here(device_type: str) -> bool:
    """True when ``torch.compile`` can generate and run a kernel on ``device_type``."""
    return _probe(device_type) is None


@cache
def _probe(device_type: str) -> str | None:
    # A real compile of a one-op function: a compiler found on PATH may still lack the
    # headers or the Triton build it needs, and only compiling tells.
    try:
        doubled = torch.compile(lambda x: x * 2.0, dynamic=False)
        doubled(torch.ones(2, device=device_type))
    except Exception as err:  # noqa: BLE001 - any failure means "eager here"
        return f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
    return None


def should_compile(trainer: TrainerParams, steps: int, device_type: str) -> bool:
    """Resolve ``trainer.compile`` for a run of ``steps`` steps on ``device_type``.

    Raises:
        ParamsError: ``trainer.compile`` is true and nothing compiles on this machine.
    """
    if trainer.compile is False:
        return False
    if trainer.compile == "auto" and steps < trainer.compile_min_steps:
        return False  # the cold compile would cost more than it saves
    failure = _probe(device_type)
    if failure is not None and trainer.compile is True:
        raise ParamsError(
            f"trainer.compile: true, but torch.compile does not work on {device_type} here "
            f"({failure}); set it to auto or false"
        )
    return failure is None


def compiled_step(loss: StepLoss) -> StepLoss:
    """``loss`` compiled, with dropout drawing from the eager RNG stream.

    Inductor otherwise draws dropout masks from its own generator, so a compiled run with
    dropout would not be the eager run to round-off, and a resumed run's restored RNG
    state would not give the masks the uninterrupted run saw.
    """
    import torch._inductor.config as inductor

    inductor.fallback_random = True
    return torch.compile(loss, dynamic=False)
