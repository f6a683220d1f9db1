"""The model half of attnlab: every architecture of docs/catalogue.md as pure `torch.nn`."""

from attnlab.architecture import ModelConfig
from attnlab.lazy import lazy_exports

# What a LanguageModel is built from is exported with it; the modules that import torch
# load on first use, so that reading a ModelConfig costs no torch.
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
