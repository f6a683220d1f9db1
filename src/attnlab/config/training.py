"""Params of the training stages beyond the recipe: hardware, and the result-neutral runtime.

The recipe itself (steps, batch, lr, warmup) lives in ``train`` and the variants (P0 of
docs/catalogue.md); these sections say *where* and *how observably* it runs. Hardware knobs
can change the numbers (precision, the device's kernels), so ``trainer`` is a params section
the training stages declare. The knobs that cannot change a result (how often the loss is
logged and a checkpoint written, DataLoader workers, W&B) live in ``runtime``, which no
stage declares: changing them retrains nothing.
"""

from typing import Annotated, Literal

from pydantic import Field, PositiveInt, model_validator

from attnlab.config.base import Section
from attnlab.config.slurm import SlurmParams


class TrainerParams(Section):
    """Lightning's hardware knobs: each may change the numbers, so the training stages track it.

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


class HeartbeatParams(Section):
    """How a sweep notices a dead worker: a trial's heartbeat, and the silence that fails it.

    A failed trial is retried with the same params, so neither changes a study's values.
    """

    heartbeat_interval_s: PositiveInt
    grace_period_s: PositiveInt

    @model_validator(mode="after")
    def _grace_outlasts_heartbeat(self) -> "HeartbeatParams":
        if self.grace_period_s <= self.heartbeat_interval_s:
            raise ValueError(
                f"grace_period_s ({self.grace_period_s}) must exceed heartbeat_interval_s "
                f"({self.heartbeat_interval_s}), or live trials would be failed"
            )
        return self


class RuntimeParams(Section):
    """How a run is observed and made resumable, never what it computes.

    No stage declares ``runtime`` in dvc.yaml (the report only its W&B links): a batch
    holds the same windows whatever the number of DataLoader workers, the checkpoint
    cadence only bounds the steps redone after a kill (a checkpoint restores every RNG),
    logging and W&B read the loss without changing it, and a sweep trial failed for a silent
    heartbeat is retried with the same params, and where SLURM runs a stage
    (``slurm``) does not change what it computes. So changing any of these reruns
    no stage, and a checkpoint's fingerprint leaves them out too.
    """

    log_every_n_steps: Annotated[int, Field(ge=1)]
    num_workers: Annotated[int, Field(ge=0, le=64)]
    checkpoint: CheckpointParams
    wandb: WandbParams
    sweeps: HeartbeatParams
    slurm: SlurmParams = Field(default_factory=SlurmParams)
