"""A trained run on disk: its model folder, its curves and the weights it kept along training.

Training writes these files (:mod:`attnlab.training`); evaluation, the Winograd stages and
the sweeps read them back. Nothing here trains or measures. Every name loads its module on
first use (:mod:`attnlab.lazy`): reading a curve file never pays for torch.
"""

from attnlab.lazy import lazy_exports

__getattr__ = lazy_exports(
    __name__,
    {
        "along_weights": ("AlongWeights", "keep_along", "read_along"),
        "curve_files": ("final_loss", "read_curve", "write_curve"),
        "model_folder": ("TrainedModel", "load_trained_model", "save_trained_model"),
    },
)

__all__ = [
    "AlongWeights",
    "TrainedModel",
    "final_loss",
    "keep_along",
    "load_trained_model",
    "read_along",
    "read_curve",
    "save_trained_model",
    "write_curve",
]
