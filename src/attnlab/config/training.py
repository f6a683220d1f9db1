"""Params of the ``train`` stage beyond the recipe: hardware, checkpoints and W&B.

The recipe itself (steps, batch, lr, warmup) lives in ``train`` and the variants (P0 of
docs/catalogue.md); these sections say *where* and *how observably* it runs. Hardware knobs
can change the numbers (precision, the device's kernels), so they are params DVC tracks,
not command-line flags.
"""

from typing import Annotated, Literal

from pydantic import Field

from attnlab.config.base import Section


class TrainerParams(Section):
    """Lightning's hardware knobs, plus how often the host looks at the loss.

    ``strategy`` is ``auto`` or ``ddp`` (one process per device, on one or many nodes);
    ``ddp_spawn`` is refused because the spawned workers' state would not come back to
    the process that writes the outputs.
    """

    accelerator: Literal["auto", "cpu", "gpu", "cuda", "mps"]
    devices: Annotated[int, Field(ge=1)] | Literal["auto"]
    num_nodes: Annotated[int, Field(ge=1)]
    strategy: Literal["auto", "ddp"]
    precision: Literal["32-true", "bf16-mixed", "16-mixed", "bf16-true"]
    matmul_precision: Literal["highest", "high", "medium"]
    num_workers: Annotated[int, Field(ge=0, le=64)]
    log_every_n_steps: Annotated[int, Field(ge=1)]
    # torch.compile's kernels (attnlab.training.kernels): the same numbers to fp32
    # round-off, faster once a run is long enough to repay the compile.
    compile: bool | Literal["auto"]
    compile_min_steps: Annotated[int, Field(ge=0)]


class CheckpointParams(Section):
    """How often resume state is written (to the run root, outside the repository)."""

    every_n_train_steps: Annotated[int, Field(ge=1)]


class WandbParams(Section):
    """Where Weights & Biases files runs; the mode comes from ``WANDB_MODE`` or the API key."""

    project: Annotated[str, Field(min_length=1, pattern=r"^[^/\\#?%:]+$")]
    entity: str | None
    init_timeout_s: Annotated[float, Field(gt=0.0, le=600.0)]
