"""Training every variant of docs/catalogue.md with Lightning: resumable, tracked, any hardware.

Only the Lightning side lives here: the task, the trainer, checkpoints, tracking. What a
finished run leaves on disk is :mod:`attnlab.runs`, the batches it draws
:mod:`attnlab.data.batches`, the scores it logs while it trains :mod:`attnlab.metrics`.
Every name loads its module on first use (:mod:`attnlab.lazy`): a stage that never trains
never pays for Lightning or W&B, and one that only resolves a run's configuration
(:class:`TrainJob`: the report, the charts) not even for torch.
"""

from attnlab.lazy import lazy_exports
from attnlab.paths import seed_label

__getattr__ = lazy_exports(
    __name__,
    {
        "checkpoints": ("CheckpointError", "load_checkpoint_file"),
        "datamodule": ("TokenWindows",),
        "fit": ("TrainingInterrupted", "train_variant"),
        "group": ("FitOptions",),
        "job": (
            "RUN_ROOT_ENV",
            "TrainJob",
            "checkpoint_dir",
            "fingerprint",
            "run_root_from_env",
            "wandb_dir",
        ),
        "result": ("TrainResult",),
        "task": ("LanguageModelTask", "next_token_loss", "warmup_factor"),
    },
)

__all__ = [
    "RUN_ROOT_ENV",
    "CheckpointError",
    "FitOptions",
    "LanguageModelTask",
    "TokenWindows",
    "TrainJob",
    "TrainResult",
    "TrainingInterrupted",
    "checkpoint_dir",
    "fingerprint",
    "load_checkpoint_file",
    "next_token_loss",
    "run_root_from_env",
    "seed_label",
    "train_variant",
    "wandb_dir",
    "warmup_factor",
]
