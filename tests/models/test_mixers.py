"""The mixers against their definitions and against PyTorch (E04, E12, E19)."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from attnlab.models import CausalMean, ModelConfig, MultiHeadAttention
from attnlab.models.mixers import masked_softmax

TOL = {"atol": 1e-6, "rtol": 0.0}


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


# --- the uniform mixer: three ways to average (E04) ---------------------------------------


def _running_mean_by_loop(x):
    return torch.stack([x[:, : t + 1].mean(dim=1) for t in range(x.shape[1])], dim=1)


def _running_mean_by_matmul(x):
    T = x.shape[1]
    tril = torch.tril(torch.ones(T, T))
    return (tril / tril.sum(dim=1, keepdim=True)) @ x


def _running_mean_by_masked_softmax(x):
    T = x.shape[1]
    zeros = torch.zeros(T, T).masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), -torch.inf)
    return zeros.softmax(dim=-1) @ x


@pytest.mark.parametrize(
    "reference",
    [_running_mean_by_loop, _running_mean_by_matmul, _running_mean_by_masked_softmax],
)
def test_uniform_mixer_is_the_running_mean(reference):
    x = torch.randn(3, 64, 16)
    expected = reference(x)
    torch.testing.assert_close(CausalMean()(x), expected, **TOL)
    y, record = CausalMean().forward_with_record(x)
    torch.testing.assert_close(y, expected, **TOL)
    assert record.weights.shape == (3, 1, 64, 64)
    assert torch.all(record.scores == 0)


def test_uniform_mixer_weights_are_the_averaging_matrix():
    _, record = CausalMean().forward_with_record(torch.randn(1, 6, 4))
    expected = torch.tril(torch.ones(6, 6)) / torch.arange(1, 7)[:, None]
    torch.testing.assert_close(record.weights[0, 0], expected, **TOL)


def test_uniform_mixer_without_mask_is_the_window_mean():
    x = torch.randn(2, 10, 4)
    torch.testing.assert_close(CausalMean()(x, causal=False), x.mean(1, keepdim=True).expand_as(x))


# --- attention: permutation equivariance (E12) ---------------------------------------------


def test_attention_without_positions_or_mask_is_permutation_equivariant():
    attn = MultiHeadAttention(ModelConfig(d_model=32, n_head=4, position="none"))
    x, perm = torch.randn(2, 12, 32), torch.randperm(12)
    torch.testing.assert_close(attn(x[:, perm], causal=False), attn(x, causal=False)[:, perm])
    # With the mask the order matters: the same check must fail.
    assert not torch.allclose(attn(x[:, perm]), attn(x)[:, perm], atol=1e-3)


# --- attention: parity with PyTorch (E19) --------------------------------------------------


def _causal_bool_mask(T):
    return torch.ones(T, T, dtype=torch.bool).triu(1)  # True = not allowed, as MHA expects


@pytest.mark.parametrize("qkv_bias", [False, True])
def test_attention_matches_nn_multihead_attention(qkv_bias):
    cfg = ModelConfig(d_model=128, n_head=4, position="none", qkv_bias=qkv_bias)
    ours = MultiHeadAttention(cfg).eval()
    theirs = nn.MultiheadAttention(128, 4, batch_first=True).eval()
    with torch.no_grad():
        theirs.in_proj_weight.copy_(ours.qkv.weight)  # both stack q, k, v along the rows
        theirs.in_proj_bias.copy_(ours.qkv.bias if qkv_bias else torch.zeros(3 * 128))
        theirs.out_proj.weight.copy_(ours.out.weight)
        theirs.out_proj.bias.copy_(ours.out.bias)
    x = torch.randn(4, 32, 128)
    with torch.no_grad():
        expected, expected_weights = theirs(
            x, x, x, attn_mask=_causal_bool_mask(32), average_attn_weights=False
        )
        y, record = ours.forward_with_record(x)
        torch.testing.assert_close(ours(x), expected, **TOL)
    torch.testing.assert_close(y, expected, **TOL)
    torch.testing.assert_close(record.weights, expected_weights, **TOL)


def test_attention_matches_scaled_dot_product_attention_by_hand():
    cfg = ModelConfig(d_model=128, n_head=4, position="none")
    ours = MultiHeadAttention(cfg)
    x = torch.randn(4, 32, 128)
    w_q, w_k, w_v = ours.qkv.weight.chunk(3, dim=0)

    def heads(w):
        return F.linear(x, w).view(4, 32, 4, 32).transpose(1, 2)  # (B, H, T, D)

    with torch.no_grad():
        y = F.scaled_dot_product_attention(heads(w_q), heads(w_k), heads(w_v), is_causal=True)
        expected = ours.out(y.transpose(1, 2).reshape(4, 32, 128))
        torch.testing.assert_close(ours(x), expected, **TOL)
        torch.testing.assert_close(ours.forward_with_record(x)[0], expected, **TOL)


# --- attention: the fast path equals the explicit path -------------------------------------

PATH_CONFIGS = {
    "p0": {},
    "alibi": {"position": "alibi"},
    "alibi-6-heads": {"position": "alibi", "n_head": 6, "d_model": 96},
    "rope": {"position": "rope"},
    "unscaled": {"scale_scores": False},
    "d-head-256": {"n_head": 1, "d_head": 256},
    "d-head-1024-unscaled": {"n_head": 1, "d_head": 1024, "scale_scores": False},
    "rope-d-head-64-no-out-proj": {"position": "rope", "d_head": 64, "out_proj": False},
    "qkv-bias": {"qkv_bias": True},
}


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("overrides", PATH_CONFIGS.values(), ids=PATH_CONFIGS.keys())
def test_fast_path_equals_explicit_path(overrides, causal):
    cfg = ModelConfig(**overrides)
    attn = MultiHeadAttention(cfg).eval()
    x = torch.randn(2, 40, cfg.d_model)
    with torch.no_grad():
        y, record = attn.forward_with_record(x, causal=causal)
        torch.testing.assert_close(attn(x, causal=causal), y, **TOL)
    assert y.shape == x.shape
    assert record.weights.shape == record.scores.shape == (2, cfg.n_head, 40, 40)
    torch.testing.assert_close(record.weights.sum(-1), torch.ones(2, cfg.n_head, 40))
    if causal:
        assert torch.all(record.weights.triu(1) == 0)  # exactly zero, thanks to -inf


def test_mask_holds_however_negative_the_scores():
    # Real scores far below any finite sentinel (-1e9 would win here and put all the weight
    # on the future); with -inf the visible keys keep all of it.
    weights = masked_softmax(torch.full((1, 1, 5, 5), -1e12), causal=True)
    expected = torch.tril(torch.ones(5, 5)) / torch.arange(1, 6)[:, None]
    torch.testing.assert_close(weights[0, 0], expected, **TOL)
