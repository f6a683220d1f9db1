"""Properties of our multi-head attention on its own: E12 (equivariance) and E19 (parity).

E12: without positions and without the mask, attention only ever sees the set of tokens,
so permuting the input permutes the output: attention(P x) = P attention(x). The causal
mask and positions inside attention (RoPE, ALiBi) are shown breaking it, as contrast.
E19: our `MultiHeadAttention` against PyTorch's `nn.MultiheadAttention` (causal mask) and
against `F.scaled_dot_product_attention` called on the same weights, in float32.
"""

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attnlab.models import ModelConfig, MultiHeadAttention
from attnlab.probes.records import Value
from attnlab.probes.seeding import derive_seed, generator


def build_attention(cfg: ModelConfig, seed: int) -> MultiHeadAttention:
    """Our attention layer in eval mode, initialised from ``seed`` (the global RNG untouched)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return MultiHeadAttention(cfg).eval()


# E12's cases: (position inside attention, causal mask). The first is the claim.
EQUIVARIANCE_CASES = (("none", False), ("none", True), ("rope", False), ("alibi", False))


@dataclass(frozen=True)
class EquivarianceCase:
    """One E12 case: max |attention(P x) - P attention(x)|."""

    position: str
    causal: bool
    max_abs_diff: float


@dataclass(frozen=True)
class EquivarianceResult:
    """E12 over its cases."""

    cases: list[EquivarianceCase]

    def metrics(self) -> dict[str, Value]:
        """The diff per case; ``e12/max_abs_diff`` is the claim's (no positions, no mask)."""
        out: dict[str, Value] = {}
        for c in self.cases:
            claim = c.position == "none" and not c.causal
            name = "max_abs_diff" if claim else f"contrast/{c.position}-{_mask(c.causal)}"
            out[f"e12/{name}"] = c.max_abs_diff
        return out

    def table(self) -> list[dict[str, Value]]:
        """One row per case."""
        return [
            {"position": c.position, "mask": _mask(c.causal), "max_abs_diff": c.max_abs_diff}
            for c in self.cases
        ]


def _mask(causal: bool) -> str:
    return "causal" if causal else "none"


def equivariance_probe(
    batch: int, tokens: int, d_model: int, n_head: int, seed: int
) -> EquivarianceResult:
    """Run E12: one random batch and one random permutation of its positions, per case."""
    g = generator(seed, "e12")
    x = torch.randn(batch, tokens, d_model, generator=g)  # (B, T, C)
    perm = torch.randperm(tokens, generator=g)
    cases = []
    for position, causal in EQUIVARIANCE_CASES:
        cfg = ModelConfig(d_model=d_model, n_head=n_head, position=position, block_size=tokens)
        attention = build_attention(cfg, derive_seed(seed, "e12", "weights"))
        with torch.no_grad():
            permuted_after = attention(x, causal=causal)[:, perm]  # (B, T, C)
            permuted_before = attention(x[:, perm], causal=causal)  # (B, T, C)
        diff = (permuted_before - permuted_after).abs().max().item()
        cases.append(EquivarianceCase(position, causal, diff))
    return EquivarianceResult(cases)


def sdpa_reference(x: Tensor, attention: MultiHeadAttention, n_head: int) -> Tensor:
    """Causal attention by `F.linear` and `F.scaled_dot_product_attention` on copied weights.

    Reads the layer's fused q|k|v projection (`qkv`, rows in the order q, k, v, heads
    contiguous) and its output projection (`out`).
    """
    B, T, C = x.shape
    q, k, v = F.linear(x, attention.qkv.weight, attention.qkv.bias).split(C, dim=-1)
    q = q.view(B, T, n_head, C // n_head).transpose(1, 2)  # (B, H, T, D)
    k = k.view(B, T, n_head, C // n_head).transpose(1, 2)  # (B, H, T, D)
    v = v.view(B, T, n_head, C // n_head).transpose(1, 2)  # (B, H, T, D)
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, H, T, D)
    y = y.transpose(1, 2).reshape(B, T, C)  # (B, T, C)
    return F.linear(y, attention.out.weight, attention.out.bias)


def torch_reference(x: Tensor, attention: MultiHeadAttention, n_head: int) -> Tensor:
    """The same layer as PyTorch's `nn.MultiheadAttention` with every weight copied across.

    `nn.MultiheadAttention` always has an input-projection bias; a bias-free layer of ours
    is copied as a zero bias, which is the same function.
    """
    C = x.shape[-1]
    mha = nn.MultiheadAttention(C, n_head, bias=True, batch_first=True).eval()
    with torch.no_grad():
        mha.in_proj_weight.copy_(attention.qkv.weight)
        bias = attention.qkv.bias
        mha.in_proj_bias.copy_(bias if bias is not None else torch.zeros(3 * C))
        mha.out_proj.weight.copy_(attention.out.weight)
        mha.out_proj.bias.copy_(attention.out.bias)
    future = torch.ones(x.shape[1], x.shape[1], dtype=torch.bool).triu(1)  # (T, T), True = masked
    y, _ = mha(x, x, x, attn_mask=future, need_weights=False)  # (B, T, C)
    return y


@dataclass(frozen=True)
class ParityCase:
    """One E19 comparison of our layer's output with a reference."""

    qkv_bias: bool
    reference: str
    max_abs_diff: float
    mean_abs_output: float


@dataclass(frozen=True)
class ParityResult:
    """E19 over both bias settings and every reference."""

    cases: list[ParityCase]

    def metrics(self) -> dict[str, Value]:
        """The worst diff per reference, and the output magnitude it is relative to."""
        worst: dict[str, float] = {}
        for c in self.cases:
            worst[c.reference] = max(worst.get(c.reference, 0.0), c.max_abs_diff)
        out: dict[str, Value] = {f"e19/vs_{name}": diff for name, diff in worst.items()}
        out["e19/mean_abs_output"] = max(c.mean_abs_output for c in self.cases)
        return out

    def table(self) -> list[dict[str, Value]]:
        """One row per (bias setting, reference)."""
        return [
            {
                "qkv_bias": c.qkv_bias,
                "reference": c.reference,
                "max_abs_diff": c.max_abs_diff,
                "mean_abs_output": c.mean_abs_output,
            }
            for c in self.cases
        ]


def parity_probe(batch: int, tokens: int, d_model: int, n_head: int, seed: int) -> ParityResult:
    """Run E19 in float32, with the P0 bias-free q/k/v and with GPT-2's biases."""
    x = torch.randn(batch, tokens, d_model, generator=generator(seed, "e19"))  # (B, T, C)
    cases = []
    for qkv_bias in (False, True):
        cfg = ModelConfig(d_model=d_model, n_head=n_head, position="none", qkv_bias=qkv_bias)
        attention = build_attention(cfg, derive_seed(seed, "e19", qkv_bias))
        with torch.no_grad():
            ours = attention(x)  # (B, T, C), the fused path the models train with
            references = {
                "nn_multihead_attention": torch_reference(x, attention, n_head),
                "sdpa": sdpa_reference(x, attention, n_head),
                "own_masked_softmax": attention.forward_with_record(x)[0],
            }
        magnitude = ours.abs().mean().item()
        for name, y in references.items():
            diff = (ours - y).abs().max().item()
            cases.append(ParityCase(qkv_bias, name, diff, magnitude))
    return ParityResult(cases)
