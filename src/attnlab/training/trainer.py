"""Lightning's Trainer for one :class:`~attnlab.training.job.TrainJob` (every trained experiment).

The hardware comes from params ``trainer``; Lightning's own checkpointing, progress bar and
distributed sampler give way to attnlab's (:mod:`attnlab.training.checkpoints`,
:mod:`attnlab.training.progress`, the per-step batches of :mod:`attnlab.data.batches`).
Validation is the ``val/ppl`` curve's (:class:`~attnlab.metrics.ValidationCurve`), or
none: Lightning's validation loop draws its points.
"""

from pathlib import Path
from typing import Any

import lightning.pytorch as pl
import torch
from lightning.pytorch.utilities.exceptions import MisconfigurationException

from attnlab.errors import ParamsError
from attnlab.metrics.validation_curve import ValidationCurve
from attnlab.training.checkpoints import AtomicCheckpointIO
from attnlab.training.job import TrainJob


def build_trainer(
    job: TrainJob, callbacks: list[pl.Callback], root: Path, curve: ValidationCurve | None
) -> pl.Trainer:
    """Lightning's Trainer for ``job``, validating at ``curve``'s points (none without one).

    Raises:
        ParamsError: the hardware params ask for what this machine lacks (naming it), or
            the batch does not split evenly across the processes.
    """
    hardware = job.trainer
    try:
        trainer = pl.Trainer(
            accelerator=hardware.accelerator,
            devices=hardware.devices,
            num_nodes=hardware.num_nodes,
            strategy=hardware.strategy,
            precision=hardware.precision,
            max_steps=job.steps,
            max_epochs=-1,
            logger=False,  # the W&B logger is attached on rank 0 only, once ranks are known
            callbacks=callbacks,
            plugins=[AtomicCheckpointIO()],
            # ModelCheckpoint's file moves with the logger's run id (PITFALLS 7): ours is fixed.
            enable_checkpointing=False,
            enable_progress_bar=False,  # Progress, which adds no host sync
            enable_model_summary=False,
            use_distributed_sampler=False,  # ranks slice the step's batch themselves
            default_root_dir=root,
            **_validation(curve),
        )
    except MisconfigurationException as err:  # e.g. accelerator: gpu on a machine without
        raise ParamsError(
            f"trainer: accelerator={hardware.accelerator!r} devices={hardware.devices!r} "
            f"strategy={hardware.strategy!r} cannot run here: {err}"
        ) from None
    batch_size = job.variant.train.batch_size
    if batch_size % trainer.world_size:
        raise ParamsError(
            f"variants.{job.variant.name}.train.batch_size: {batch_size} windows do not "
            f"split evenly across {trainer.world_size} processes"
        )
    return trainer


def _validation(curve: ValidationCurve | None) -> dict[str, Any]:
    """The Trainer's validation settings: the curve's cadence in steps, or no validation."""
    if curve is None:
        return {"limit_val_batches": 0, "num_sanity_val_steps": 0}
    return {
        "val_check_interval": curve.every_n_steps,
        "check_val_every_n_epoch": None,  # count steps across the one long epoch
        "num_sanity_val_steps": -1,  # the sanity check, over every batch, is step 0's point
    }


def device_name(trainer: pl.Trainer) -> str:
    """The device the run trained on, with the GPU's name: ``cuda (NVIDIA H100)``, ``cpu``."""
    device = trainer.strategy.root_device
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else None
    return f"{device.type} ({name})" if name else device.type
