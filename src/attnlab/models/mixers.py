"""The token mixers: the causal running mean and multi-head attention.

Serves E02 (the ladder from the average to attention), E04 (the mean as a masked softmax
over zeros), E08/E09 (head width and the division by sqrt(d_k)), E12 (permutation
equivariance), E13 (RoPE and ALiBi inside attention) and E19 (parity with PyTorch).

Each mixer has two paths with the same result. `forward` is the fast one, used for
training: a cumulative sum for the mean, `F.scaled_dot_product_attention` for attention.
`forward_with_record` is the readable masked-softmax path that also returns the scores
and weights (an `AttentionRecord`); only `LanguageModel.attention_maps` calls it, so
training never materialises a (T, T) matrix it does not need.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attnlab.architecture import ModelConfig
from attnlab.models.positions import QK_POSITIONS, SCORE_POSITIONS


@dataclass(frozen=True)
class AttentionRecord:
    """What one block's mixer did on a batch.

    Attributes:
        scores: (B, H, T, T) raw scores, after the optional division by sqrt(d_head) and
            the ALiBi bias, before the causal mask. Entries above the diagonal are left as
            computed (not -inf), so select the lower triangle for statistics of the causal
            scores (E09). For the uniform mixer, all zeros.
        weights: (B, H, T, T) softmax weights; each row sums to 1 and, with the causal mask,
            is exactly 0 above the diagonal. For the uniform mixer H is 1 and the weights
            are the causal averaging matrix.
    """

    scores: Tensor
    weights: Tensor


def _causal_mask(T: int, device: torch.device) -> Tensor:
    """Return a (T, T) bool matrix, True where key j is in the future of query i."""
    return torch.ones(T, T, dtype=torch.bool, device=device).triu(1)


def masked_softmax(scores: Tensor, causal: bool) -> Tensor:
    """Softmax over the last dimension, future keys masked with -inf when `causal`.

    -inf, never a large finite number such as -1e9: exp(-inf) is exactly 0 whatever the
    other scores are, so the future gets exactly zero weight and no gradient. A finite
    sentinel only works while every real score stays far above it (E09's unscaled scores
    grow by orders of magnitude), and -1e9 is not even representable in float16. A row
    with every entry masked would give NaN, but the causal mask always leaves the
    diagonal, so no row is empty.
    """
    if causal:
        T = scores.shape[-1]
        scores = scores.masked_fill(_causal_mask(T, scores.device), float("-inf"))
    return scores.softmax(dim=-1)


class CausalMean(nn.Module):
    """The uniform mixer: each position becomes the mean of itself and its prefix (E02).

    No parameters. It is attention with all scores equal: the softmax of a -inf-masked zero
    matrix is the causal averaging matrix (E04), which is what `forward_with_record` uses.
    """

    def __init__(self, cfg: ModelConfig | None = None) -> None:
        # `cfg` is unused: it is accepted so that MIXERS builds every mixer the same way.
        super().__init__()

    def forward(self, x: Tensor, causal: bool = True) -> Tensor:
        """Average `x` (B, T, C) over each prefix (or over the whole window if not causal)."""
        if not causal:
            return x.mean(dim=1, keepdim=True).expand_as(x)  # (B, T, C)
        T = x.shape[1]
        # Counts in float32: bfloat16 cannot even represent 257 exactly.
        counts = torch.arange(1, T + 1, device=x.device, dtype=torch.float32)  # (T,)
        return (x.cumsum(dim=1) / counts[:, None]).to(x.dtype)  # (B, T, C)

    def forward_with_record(self, x: Tensor, causal: bool = True) -> tuple[Tensor, AttentionRecord]:
        """Average by a masked softmax over zero scores; return the output and its record."""
        B, T, _ = x.shape
        scores = x.new_zeros(B, 1, T, T)  # (B, 1, T, T)
        weights = masked_softmax(scores, causal)  # (B, 1, T, T)
        y = weights[:, 0] @ x  # (B, T, C)
        return y, AttentionRecord(scores=scores, weights=weights)


class MultiHeadAttention(nn.Module):
    """Causal multi-head self-attention, usable on its own (E12, E19).

    q and k project to n_head * head_dim, v to n_head * value_dim = d_model, so every head's
    output has width d_model / n_head and the concatenated heads have the model width even
    when head_dim differs (E08). The three projections are one fused `nn.Linear` (one
    matmul instead of three; PyTorch's default init depends only on the input width, so the
    fused weight is distributed exactly as three separate ones). W_o (with bias) mixes the
    heads when `cfg.out_proj`. RoPE and ALiBi, when configured, live here.
    """

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.n_head, self.head_dim, self.value_dim = cfg.n_head, cfg.head_dim, cfg.value_dim
        qk_width, v_width = cfg.n_head * cfg.head_dim, cfg.n_head * cfg.value_dim
        self.split_sizes = (qk_width, qk_width, v_width)
        self.qkv = nn.Linear(cfg.d_model, 2 * qk_width + v_width, bias=cfg.qkv_bias)
        self.out = nn.Linear(v_width, cfg.d_model) if cfg.out_proj else nn.Identity()
        self.scale = 1.0 / math.sqrt(cfg.head_dim) if cfg.scale_scores else 1.0
        self.dropout = cfg.dropout
        self.weight_drop = nn.Dropout(cfg.dropout)
        rotary = QK_POSITIONS.get(cfg.position)
        alibi = SCORE_POSITIONS.get(cfg.position)
        self.rotary = rotary(cfg) if rotary is not None else None
        self.alibi = alibi(cfg) if alibi is not None else None

    def forward(self, x: Tensor, causal: bool = True) -> Tensor:
        """Attend over `x` (B, T, C) with the fused kernel; return (B, T, C).

        Args:
            x: The (already normalised, if pre-norm) residual stream.
            causal: Mask the future. False gives the unmasked attention of E12.
        """
        q, k, v = self._project(x)
        mask = None
        if self.alibi is not None:
            # SDPA takes either is_causal or a mask, so the causal -inf rides in the bias.
            mask = self.alibi(x.shape[1]).to(q.dtype)  # (H, T, T)
            if causal:
                mask = mask.masked_fill(_causal_mask(x.shape[1], x.device), float("-inf"))
        y = F.scaled_dot_product_attention(
            q,
            k,
            v,
            attn_mask=mask,
            dropout_p=self.dropout if self.training else 0.0,
            is_causal=causal and mask is None,
            scale=self.scale,
        )  # (B, H, T, Dv)
        return self._merge(y)

    def forward_with_record(self, x: Tensor, causal: bool = True) -> tuple[Tensor, AttentionRecord]:
        """Attend by an explicit masked softmax; return the output and the scores and weights."""
        q, k, v = self._project(x)
        scores = (q @ k.transpose(-2, -1)) * self.scale  # (B, H, T, T)
        if self.alibi is not None:
            scores = scores + self.alibi(x.shape[1]).to(scores.dtype)  # (B, H, T, T)
        weights = masked_softmax(scores, causal)  # (B, H, T, T)
        y = self.weight_drop(weights) @ v  # (B, H, T, Dv)
        return self._merge(y), AttentionRecord(scores=scores, weights=weights)

    def _project(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Project to per-head queries, keys (rotated if RoPE) and values."""
        B, T, _ = x.shape
        q, k, v = self.qkv(x).split(self.split_sizes, dim=-1)  # (B, T, H*D) x2, (B, T, H*Dv)
        q = q.view(B, T, self.n_head, self.head_dim).transpose(1, 2)  # (B, H, T, D)
        k = k.view(B, T, self.n_head, self.head_dim).transpose(1, 2)  # (B, H, T, D)
        v = v.view(B, T, self.n_head, self.value_dim).transpose(1, 2)  # (B, H, T, Dv)
        if self.rotary is not None:
            q, k = self.rotary(q, k)
        return q, k, v

    def _merge(self, y: Tensor) -> Tensor:
        """Concatenate the heads (B, H, T, Dv) -> (B, T, C) and apply W_o if any."""
        B, H, T, Dv = y.shape
        y = y.transpose(1, 2).reshape(B, T, H * Dv)  # (B, T, C)
        return self.out(y)


# The token mixers by `ModelConfig.mixer`; "none" has no module.
MIXERS: dict[str, type[nn.Module]] = {"uniform": CausalMean, "attention": MultiHeadAttention}
