"""Training every variant of docs/catalogue.md with Lightning: resumable, tracked, any hardware.

Other stages use :func:`load_trained_model` to read what the ``train`` stage wrote.
"""

from attnlab.training.artifacts import (
    TrainedModel,
    final_loss,
    load_trained_model,
    read_curve,
    save_trained_model,
    seed_label,
    write_curve,
    write_json,
)
from attnlab.training.checkpoints import CheckpointError, load_checkpoint_file
from attnlab.training.data import StepBatch, TokenWindows, draw_windows
from attnlab.training.fit import TrainingInterrupted, TrainResult, train_variant
from attnlab.training.runs import (
    RUN_ROOT_ENV,
    TrainJob,
    checkpoint_dir,
    fingerprint,
    run_root_from_env,
    wandb_dir,
)
from attnlab.training.task import LanguageModelTask, next_token_loss, warmup_factor

__all__ = [
    "RUN_ROOT_ENV",
    "CheckpointError",
    "LanguageModelTask",
    "StepBatch",
    "TokenWindows",
    "TrainJob",
    "TrainResult",
    "TrainedModel",
    "TrainingInterrupted",
    "checkpoint_dir",
    "draw_windows",
    "final_loss",
    "fingerprint",
    "load_checkpoint_file",
    "load_trained_model",
    "next_token_loss",
    "read_curve",
    "run_root_from_env",
    "save_trained_model",
    "seed_label",
    "train_variant",
    "wandb_dir",
    "warmup_factor",
    "write_curve",
    "write_json",
]
