"""The architecture of one language model as plain values: one field per axis of the story.

Every trained variant of docs/catalogue.md (the E02 ladder, E08's head widths, E11's norm
placements, E13's position schemes, E18's depth) is one `ModelConfig`. The defaults are
the P0 full one-block transformer (477,696 parameters). Invalid combinations fail here,
at construction, with a message that starts with the offending field's name.

It imports nothing of attnlab: the params loader (:mod:`attnlab.config`) validates every
variant's architecture with it before any stage works, and :mod:`attnlab.models` builds
the network from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

Mixer = Literal["none", "uniform", "attention"]
Position = Literal["none", "learned", "sinusoidal", "rope", "alibi"]
Norm = Literal["none", "pre", "post"]

_POSITIVE_INTS = ("vocab_size", "d_model", "n_layer", "n_head", "block_size")
_BOOLS = ("residual", "out_proj", "scale_scores", "mlp", "qkv_bias", "tie_embeddings")
_CHOICES = {"mixer": get_args(Mixer), "position": get_args(Position), "norm": get_args(Norm)}


@dataclass(frozen=True, kw_only=True)
class ModelConfig:
    """The architecture of one language model.

    Attributes:
        vocab_size: Number of token ids (P0: 1024 BPE tokens).
        d_model: Width of the residual stream.
        n_layer: Number of blocks.
        n_head: Number of attention heads; must divide `d_model` because each head's
            value (and so its output) is `d_model // n_head` wide.
        d_head: Width of queries and keys per head (E08). None means `d_model // n_head`.
        block_size: The training context length.
        max_positions: Rows of the learned position table; None means `block_size`. Set it
            to the longest evaluation length (E13): rows beyond the training length keep
            their random init.
        mixer: What mixes tokens: nothing (a bigram model), the causal running mean, or
            learned attention.
        residual: Whether the mixer's output is added to its input (True) or replaces it.
            The MLP is always residual.
        position: Where positions come from: added to the input (learned, sinusoidal),
            rotating q and k (rope) or biasing the scores (alibi).
        out_proj: Whether the concatenated heads are mixed by W_o (with bias).
        scale_scores: Whether scores are divided by sqrt(d_head) (E08).
        mlp: Whether each block has a d -> 4d -> d GELU MLP.
        norm: LayerNorm placement: none, pre-norm (with a final ln_f) or post-norm (E11).
        dropout: Probability on attention weights, sub-layer outputs and the embedding sum.
        qkv_bias: Whether the q, k, v projections have biases (GPT-2 has them; P0 does not).
        tie_embeddings: Whether the output layer reuses the token embedding (then without
            bias, as GPT-2).
    """

    vocab_size: int = 1024
    d_model: int = 128
    n_layer: int = 1
    n_head: int = 4
    d_head: int | None = None
    block_size: int = 128
    max_positions: int | None = None
    mixer: Mixer = "attention"
    residual: bool = True
    position: Position = "learned"
    out_proj: bool = True
    scale_scores: bool = True
    mlp: bool = True
    norm: Norm = "pre"
    dropout: float = 0.0
    qkv_bias: bool = False
    tie_embeddings: bool = False

    @property
    def head_dim(self) -> int:
        """Width of each head's queries and keys."""
        return self.d_head if self.d_head is not None else self.d_model // self.n_head

    @property
    def value_dim(self) -> int:
        """Width of each head's values, so that the heads concatenate to `d_model`."""
        return self.d_model // self.n_head

    @property
    def positions(self) -> int:
        """Number of positions the learned table holds (the longest usable length)."""
        return self.max_positions if self.max_positions is not None else self.block_size

    def __post_init__(self) -> None:
        """Reject values and combinations no model can be built from."""
        self._check_types()
        self._check_sizes()
        self._check_combinations()

    def _check_types(self) -> None:
        # bool is a subclass of int; `n_head: true` from YAML must not pass as 1.
        for name in _POSITIVE_INTS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{name}: must be an int, got {value!r}")
        for name in ("d_head", "max_positions"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise ValueError(f"{name}: must be an int or None, got {value!r}")
        for name in _BOOLS:
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise ValueError(f"{name}: must be a bool, got {value!r}")
        for name, choices in _CHOICES.items():
            value = getattr(self, name)
            if value not in choices:
                raise ValueError(f"{name}: must be one of {', '.join(choices)}, got {value!r}")

    def _check_sizes(self) -> None:
        for name in (*_POSITIVE_INTS, "d_head", "max_positions"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"{name}: must be positive, got {value}")
        if self.d_model % self.n_head:
            raise ValueError(
                f"n_head: d_model={self.d_model} is not divisible by n_head={self.n_head}"
            )
        if self.positions < self.block_size:
            raise ValueError(
                f"max_positions: must be >= block_size ({self.block_size}), "
                f"got {self.max_positions}"
            )
        if isinstance(self.dropout, bool) or not isinstance(self.dropout, int | float):
            raise ValueError(f"dropout: must be a number, got {self.dropout!r}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout: must be in [0, 1), got {self.dropout}")

    def _check_combinations(self) -> None:
        if self.position in ("rope", "alibi") and self.mixer != "attention":
            raise ValueError(f"position: {self.position} needs mixer=attention")
        if self.position == "rope" and self.head_dim % 2:
            raise ValueError(f"d_head: rope needs an even head width, got {self.head_dim}")
        if self.position == "sinusoidal" and self.d_model % 2:
            raise ValueError(
                f"d_model: sinusoidal positions need an even width, got {self.d_model}"
            )
