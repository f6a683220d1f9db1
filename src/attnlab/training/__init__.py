"""Training every variant of docs/catalogue.md with Lightning: resumable, tracked, any hardware.

Other stages use :func:`load_trained_model` to read what the ``train`` stage wrote. Every
name loads its module on first use (:mod:`attnlab.lazy`): a stage that never trains never
pays for Lightning or W&B, and one that only resolves a run's configuration
(:class:`TrainJob`: the report, the charts) not even for torch.
"""

from attnlab.lazy import lazy_exports
from attnlab.paths import seed_label

__getattr__ = lazy_exports(
    __name__,
    {
        "artifacts": (
            "TrainedModel",
            "final_loss",
            "load_trained_model",
            "read_curve",
            "save_trained_model",
            "write_curve",
        ),
        "data": ("StepBatch", "draw_windows"),
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
