"""The language model assembled from a `ModelConfig`: embedding, blocks, output layer.

Serves every trained experiment of docs/catalogue.md: the E02 ladder (each row one config),
E08 (head width), E11 (pre- vs post-norm, 12 blocks), E13 (positions), E16-E18 (depth)
and the attention maps of E09 and E17. Initialisation is PyTorch's default everywhere
(P0): no custom init, because E09's score statistics depend on it.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from attnlab.architecture import ModelConfig
from attnlab.models.mixers import MIXERS, AttentionRecord
from attnlab.models.positions import INPUT_POSITIONS


class MLP(nn.Module):
    """The per-position feed-forward layer: d -> 4d -> d with an exact GELU."""

    def __init__(self, d_model: int) -> None:
        super().__init__()
        self.fc = nn.Linear(d_model, 4 * d_model)
        self.act = nn.GELU()
        self.proj = nn.Linear(4 * d_model, d_model)

    def forward(self, x: Tensor) -> Tensor:
        """Apply the MLP to every position of `x` (B, T, C)."""
        return self.proj(self.act(self.fc(x)))  # (B, T, C)


def _dropout(p: float) -> nn.Module:
    # Identity when off (the P0 default): training then pays not even a call for it.
    return nn.Dropout(p) if p > 0 else nn.Identity()


class Block(nn.Module):
    """One block: a mixer sub-layer, then an MLP sub-layer, each optional.

    Placements of LayerNorm (`cfg.norm`):
        pre:  x = x + mixer(ln1(x)); x = x + mlp(ln2(x))      (GPT-2)
        post: x = ln1(x + mixer(x)); x = ln2(x + mlp(x))      (the original transformer)
        none: x = x + mixer(x);      x = x + mlp(x)
    With `residual=False` the mixer's output replaces x instead of adding to it (the E02
    rows "average" and "head-replace"). A sub-layer that is switched off has no norm either.
    """

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.post = cfg.norm == "post"
        self.residual = cfg.residual
        has_mixer = cfg.mixer != "none"
        self.mixer = MIXERS[cfg.mixer](cfg) if has_mixer else None
        self.mlp = MLP(cfg.d_model) if cfg.mlp else None
        self.ln1 = self._norm(cfg) if has_mixer else None
        self.ln2 = self._norm(cfg) if cfg.mlp else None
        self.drop = _dropout(cfg.dropout)

    @staticmethod
    def _norm(cfg: ModelConfig) -> nn.Module:
        return nn.LayerNorm(cfg.d_model) if cfg.norm != "none" else nn.Identity()

    def forward(self, x: Tensor, records: list[AttentionRecord] | None = None) -> Tensor:
        """Apply the block to `x` (B, T, C).

        Args:
            x: The residual stream.
            records: None for the fast path. A list makes the mixer take its explicit
                masked-softmax path and append its `AttentionRecord` to it.
        """
        if self.mixer is not None:
            h = x if self.post else self.ln1(x)
            if records is None:
                y = self.mixer(h)
            else:
                y, record = self.mixer.forward_with_record(h)
                records.append(record)
            x = self._close(x, y, self.ln1, self.residual)
        if self.mlp is not None:
            h = x if self.post else self.ln2(x)
            x = self._close(x, self.mlp(h), self.ln2, residual=True)
        return x

    def _close(self, x: Tensor, y: Tensor, norm: nn.Module, residual: bool) -> Tensor:
        """Finish a sub-layer: dropout, the optional residual, then the post-norm if any."""
        y = self.drop(y)
        if residual:
            y = x + y
        return norm(y) if self.post else y


class LanguageModel(nn.Module):
    """A causal language model: token ids (B, T) to next-token logits (B, T, V).

    The output layer is an untied `nn.Linear(d_model, vocab_size)` with bias (P0); with
    `tie_embeddings` it shares the token embedding's weight and has no bias (GPT-2).
    Pre-norm ends with a final LayerNorm `ln_f` before the output layer. Post-norm has
    none: its last sub-layer already ends in a LayerNorm, so a second one would only
    re-normalise a normalised stream. `norm="none"` has no LayerNorm anywhere.

    T may exceed `block_size`: up to `cfg.positions` with learned positions, any length
    with the other schemes (E13).
    """

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.config = cfg
        self.tok = nn.Embedding(cfg.vocab_size, cfg.d_model)
        position = INPUT_POSITIONS.get(cfg.position)
        self.pos = position(cfg) if position is not None else None
        self.drop = _dropout(cfg.dropout)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.d_model) if cfg.norm == "pre" else None
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=not cfg.tie_embeddings)
        if cfg.tie_embeddings:
            self.head.weight = self.tok.weight

    def forward(self, idx: Tensor) -> Tensor:
        """Return the logits (B, T, vocab_size) for token ids `idx` (B, T)."""
        return self._run(idx, records=None)

    @torch.no_grad()
    def attention_maps(self, idx: Tensor) -> list[AttentionRecord]:
        """Return each block's attention scores and weights on `idx` (B, T).

        One record per block with a mixer, in order; a model with `mixer="none"` returns
        an empty list. Runs the explicit masked-softmax path without gradients; call it in
        eval mode, or attention dropout will perturb the blocks after the first.
        """
        records: list[AttentionRecord] = []
        self._run(idx, records=records)
        return records

    def _run(self, idx: Tensor, records: list[AttentionRecord] | None) -> Tensor:
        T = idx.shape[1]
        x = self.tok(idx)  # (B, T, C)
        if self.pos is not None:
            x = x + self.pos(T)  # (B, T, C) + (T, C)
        x = self.drop(x)
        for block in self.blocks:
            x = block(x, records)
        if self.ln_f is not None:
            x = self.ln_f(x)
        return self.head(x)  # (B, T, V)
