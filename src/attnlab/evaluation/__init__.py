"""Evaluation: P0's perplexity, E13's extrapolation, E09's score statistics, E11's gradients.

Pure functions over a model and token tensors, plus the ``ValidationCurve`` callback that
keeps the ``val/ppl`` curve Lightning's validation loop draws during training. Nothing
here knows about params.yaml or paths.
The two Lightning callbacks (``ValidationCurve``, ``WholeSplitScore``) load on first use
(:mod:`attnlab.lazy`): the evaluate stage measures a trained model without Lightning.
"""

from attnlab.evaluation.attention_stats import attention_statistics, head_statistics
from attnlab.evaluation.gradients import block_gradient_norms, parameter_counts
from attnlab.evaluation.initial import build_initial_model
from attnlab.evaluation.perplexity import (
    Perplexity,
    perplexity,
    perplexity_by_length,
    score_windows,
)
from attnlab.evaluation.report import EXTRA_MEASUREMENTS, EvaluationInputs, evaluate_variant
from attnlab.evaluation.windows import Windows, cut_windows, sample_windows
from attnlab.lazy import lazy_exports

__getattr__ = lazy_exports(
    __name__, {"curve": ("ValidationCurve",), "summary": ("WholeSplitScore",)}
)

__all__ = [
    "WholeSplitScore",
    "EXTRA_MEASUREMENTS",
    "EvaluationInputs",
    "Perplexity",
    "ValidationCurve",
    "Windows",
    "attention_statistics",
    "block_gradient_norms",
    "build_initial_model",
    "cut_windows",
    "evaluate_variant",
    "head_statistics",
    "parameter_counts",
    "perplexity",
    "perplexity_by_length",
    "sample_windows",
    "score_windows",
]
