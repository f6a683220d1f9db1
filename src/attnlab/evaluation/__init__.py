"""Evaluation: E09's score statistics, E11's gradients, and every measurement of a saved run.

Pure functions over a model and token tensors, and the one registry of the evaluate
stage's measurements (:mod:`attnlab.evaluation.measurements`; their names,
:mod:`attnlab.evaluation.names`). The scores every run also gets while it trains
(perplexity, bits per byte) are :mod:`attnlab.metrics`. Every name loads its module on
first use (:mod:`attnlab.lazy`): the report reads the measurements' names without torch.
"""

from attnlab.lazy import lazy_exports

__getattr__ = lazy_exports(
    __name__,
    {
        "attention_stats": ("attention_statistics", "head_statistics"),
        "gradients": ("block_gradient_norms", "parameter_counts"),
        "initial": ("build_initial_model",),
        "measurements": ("EXTRA_MEASUREMENTS", "EvaluationInputs", "evaluate_variant"),
    },
)

__all__ = [
    "EXTRA_MEASUREMENTS",
    "EvaluationInputs",
    "attention_statistics",
    "block_gradient_norms",
    "build_initial_model",
    "evaluate_variant",
    "head_statistics",
    "parameter_counts",
]
