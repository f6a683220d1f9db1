"""The scores a language model gets, while it trains and after: P0's perplexity, bits per byte.

Pure functions over a model and token tensors (perplexity over non-overlapping windows,
E13's perplexity by length, bits per byte), plus the two Lightning callbacks that score a
run while it trains: ``ValidationCurve`` (the ``val/ppl`` curve) and ``WholeSplitScore``
(the W&B summary). Training and evaluation both score with these, so a number means the
same in either. The callbacks load on first use (:mod:`attnlab.lazy`): the evaluate stage
scores a trained model without Lightning.
"""

from attnlab.lazy import lazy_exports
from attnlab.metrics.bpb import bits_per_byte, scored_bytes, token_byte_lengths
from attnlab.metrics.perplexity import Perplexity, perplexity, perplexity_by_length, score_windows
from attnlab.metrics.windows import Windows, cut_windows, sample_windows

__getattr__ = lazy_exports(
    __name__,
    {"validation_curve": ("ValidationCurve",), "whole_split": ("WholeSplitScore",)},
)

__all__ = [
    "Perplexity",
    "ValidationCurve",
    "WholeSplitScore",
    "Windows",
    "bits_per_byte",
    "cut_windows",
    "perplexity",
    "perplexity_by_length",
    "sample_windows",
    "score_windows",
    "scored_bytes",
    "token_byte_lengths",
]
