"""The model half of attnlab: every architecture of docs/catalogue.md as pure `torch.nn`."""

from attnlab.models.config import ModelConfig
from attnlab.models.counting import (
    block_parameter_split,
    count_parameters_by_formula,
    count_parameters_by_module,
)
from attnlab.models.mixers import AttentionRecord, CausalMean, MultiHeadAttention
from attnlab.models.positions import (
    AlibiBias,
    LearnedPosition,
    RotaryPosition,
    SinusoidalPosition,
    alibi_slopes,
)
from attnlab.models.transformer import Block, LanguageModel

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
