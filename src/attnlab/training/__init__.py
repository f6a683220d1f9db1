"""Training every variant of docs/catalogue.md with Lightning: resumable, tracked, any hardware.

Other stages use :func:`load_trained_model` to read what the ``train`` stage wrote. Importing
the package imports only those readers (and torch); the names of modules that import Lightning
or W&B load on first use (:mod:`attnlab.lazy`), so a stage that never trains never pays for them.
"""

from attnlab.lazy import lazy_exports
from attnlab.paths import seed_label
from attnlab.training.artifacts import (
    TrainedModel,
    final_loss,
    load_trained_model,
    read_curve,
    save_trained_model,
    write_curve,
)
from attnlab.training.data import StepBatch, draw_windows

__getattr__ = lazy_exports(
    __name__,
    {
        "checkpoints": ("CheckpointError", "load_checkpoint_file"),
        "datamodule": ("TokenWindows",),
        "fit": ("TrainingInterrupted", "train_variant"),
        "result": ("TrainResult",),
        "runs": (
            "RUN_ROOT_ENV",
            "TrainJob",
            "checkpoint_dir",
            "fingerprint",
            "run_root_from_env",
            "wandb_dir",
        ),
        "task": ("LanguageModelTask", "next_token_loss", "warmup_factor"),
    },
)

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
]
