"""The model half of attnlab: every architecture of docs/catalogue.md as pure `torch.nn`."""

from attnlab.lazy import lazy_exports
from attnlab.models.config import ModelConfig

# The config loader validates every variant's ModelConfig in stages that build no model
# (download, bpe, tokenize, report): the modules that import torch load on first use.
__getattr__ = lazy_exports(
    __name__,
    {
        "counting": (
            "block_parameter_split",
            "count_parameters_by_formula",
            "count_parameters_by_module",
        ),
        "mixers": ("AttentionRecord", "CausalMean", "MultiHeadAttention"),
        "positions": (
            "AlibiBias",
            "LearnedPosition",
            "RotaryPosition",
            "SinusoidalPosition",
            "alibi_slopes",
        ),
        "transformer": ("Block", "LanguageModel"),
    },
)

__all__ = [
    "AlibiBias",
    "AttentionRecord",
    "Block",
    "CausalMean",
    "LanguageModel",
    "LearnedPosition",
    "ModelConfig",
    "MultiHeadAttention",
    "RotaryPosition",
    "SinusoidalPosition",
    "alibi_slopes",
    "block_parameter_split",
    "count_parameters_by_formula",
    "count_parameters_by_module",
]
