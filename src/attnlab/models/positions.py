"""Position schemes, each a small class acting in exactly one of three places.

Serves E02 (learned positions before the mean) and E13 (positions and length
extrapolation). Following x-transformers, a scheme is either added to the input embedding
(learned, sinusoidal), applied to queries and keys inside attention (RoPE), or added to the
attention scores (ALiBi). The three registries at the bottom name which is which; the
model and the attention module look a scheme up there and nowhere else.

Everything but the learned table is computed on the fly for the length asked: it costs
O(T * C) (O(H * T^2) for ALiBi, the size of the scores it is added to), needs no cache to
keep in step with devices and dtypes, and works for any length.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor, nn

from attnlab.architecture import ModelConfig


class LearnedPosition(nn.Module):
    """A learned absolute position table added to the token embedding.

    The table has `cfg.positions` rows, initialised N(0, 1) as any `nn.Embedding` (P0).
    Rows beyond the training length exist (E13 evaluates at up to 4x the training length)
    but get no gradient while training on shorter windows, so they keep their random init.
    """

    def __init__(self, n_positions: int, d_model: int) -> None:
        super().__init__()
        self.table = nn.Embedding(n_positions, d_model)

    def forward(self, T: int) -> Tensor:
        """Return the first `T` rows, (T, C).

        Raises:
            ValueError: If `T` is longer than the table.
        """
        if T > self.table.num_embeddings:
            raise ValueError(
                f"sequence of {T} tokens is longer than the {self.table.num_embeddings} "
                "learned positions (raise max_positions)"
            )
        # A slice, not a lookup: rows >= T get an exactly-zero gradient.
        return self.table.weight[:T]  # (T, C)


class SinusoidalPosition(nn.Module):
    """The fixed sinusoids of "Attention is all you need", added to the token embedding.

    PE[p, 2i] = sin(p / 10000^(2i/d)) and PE[p, 2i+1] = cos(p / 10000^(2i/d)): sine and
    cosine interleaved, as in the paper's formula. No parameters.
    """

    def __init__(self, d_model: int, base: float = 10000.0) -> None:
        super().__init__()
        inv_freq = base ** (-torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
        # Not persistent: derived from the config, so it has no place in a checkpoint.
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, T: int) -> Tensor:
        """Return the encodings of positions 0..T-1, (T, C), for any `T`."""
        p = torch.arange(T, device=self.inv_freq.device, dtype=torch.float32)
        angles = torch.outer(p, self.inv_freq)  # (T, C/2)
        return torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(1)  # (T, C)


class RotaryPosition(nn.Module):
    """Rotary position embedding (RoPE, Su et al. 2021) applied to queries and keys.

    The "rotate-half" variant of GPT-NeoX, Llama in Hugging Face and litgpt: dimension i is
    paired with dimension i + D/2 (not with its neighbour, as in the RoFormer paper). The
    two are the same rotation up to a fixed permutation of the head's dimensions, which the
    learned projections absorb; rotate-half needs no strided gathers. Frequencies are
    base^(-2i/D) with the standard base 10000. Rotating both q and k by their positions
    makes q . k depend on the positions only through their offset.
    """

    def __init__(self, head_dim: int, base: float = 10000.0) -> None:
        super().__init__()
        inv_freq = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, q: Tensor, k: Tensor) -> tuple[Tensor, Tensor]:
        """Rotate queries and keys of shape (B, H, T, D) by their positions 0..T-1."""
        T = q.shape[-2]
        p = torch.arange(T, device=self.inv_freq.device, dtype=torch.float32)
        angles = torch.outer(p, self.inv_freq).repeat(1, 2)  # (T, D)
        cos, sin = angles.cos().to(q.dtype), angles.sin().to(q.dtype)
        return q * cos + _rotate_half(q) * sin, k * cos + _rotate_half(k) * sin


def _rotate_half(x: Tensor) -> Tensor:
    """Map (x1, x2) to (-x2, x1) on the two halves of the last dimension."""
    x1, x2 = x.chunk(2, dim=-1)  # (..., D/2) each
    return torch.cat((-x2, x1), dim=-1)  # (..., D)


def alibi_slopes(n_head: int) -> list[float]:
    """Return the ALiBi paper's per-head slopes (Press et al. 2022).

    For n a power of two the slopes are the geometric sequence 2^(-8/n), 2^(-16/n), ...,
    2^(-8): for 8 heads 1/2, 1/4, ..., 1/256. For other n the paper takes the slopes of
    the closest lower power of two m, then every other slope of 2m until it has n.
    """
    if n_head <= 0:
        raise ValueError(f"n_head: must be positive, got {n_head}")

    def power_of_two(n: int) -> list[float]:
        start = 2.0 ** (-8.0 / n)
        return [start ** (i + 1) for i in range(n)]

    m = 2 ** math.floor(math.log2(n_head))
    return power_of_two(m) + power_of_two(2 * m)[0::2][: n_head - m]


class AlibiBias(nn.Module):
    """ALiBi: a per-head linear penalty on distance, added to the attention scores.

    The bias is -slope_h * |i - j|. On the causal part (j <= i) that is the paper's
    -slope_h * (i - j); taking the absolute value makes the non-causal case (E12's probe
    without the mask) symmetric instead of rewarding attention to the future.
    """

    def __init__(self, n_head: int) -> None:
        super().__init__()
        slopes = torch.tensor(alibi_slopes(n_head), dtype=torch.float32)
        self.register_buffer("slopes", slopes, persistent=False)

    def forward(self, T: int) -> Tensor:
        """Return the bias for T queries and T keys, (H, T, T), float32."""
        p = torch.arange(T, device=self.slopes.device, dtype=torch.float32)
        distance = (p[:, None] - p[None, :]).abs()  # (T, T)
        return -self.slopes[:, None, None] * distance  # (H, T, T)


# The three places a position scheme can act; position "none" is in none of them.
INPUT_POSITIONS: dict[str, Callable[[ModelConfig], nn.Module]] = {
    "learned": lambda cfg: LearnedPosition(cfg.positions, cfg.d_model),
    "sinusoidal": lambda cfg: SinusoidalPosition(cfg.d_model),
}
QK_POSITIONS: dict[str, Callable[[ModelConfig], nn.Module]] = {
    "rope": lambda cfg: RotaryPosition(cfg.head_dim),
}
SCORE_POSITIONS: dict[str, Callable[[ModelConfig], nn.Module]] = {
    "alibi": lambda cfg: AlibiBias(cfg.n_head),
}
