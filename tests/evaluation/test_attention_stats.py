"""E09's statistics on heads whose scores and weights are known in closed form."""

import math

import pytest
import torch

from attnlab.evaluation import attention_statistics, build_initial_model
from attnlab.models import LanguageModel, ModelConfig

T = 8  # tokens 0..7, all distinct
D = 8  # d_model = vocab = T, so the identity embedding makes each token a unit vector


def _hand_built_head(a: float, scale_scores: bool) -> LanguageModel:
    """One head whose score is ``a`` on the diagonal and 0 elsewhere.

    Token t embeds as the unit vector e_t, W_k = I and W_q = c I, so q_i . k_j = c [i == j]
    for distinct tokens; c is chosen so that the score the softmax sees is ``a``.
    """
    cfg = ModelConfig(
        vocab_size=D,
        d_model=D,
        n_head=1,
        block_size=T,
        position="none",
        out_proj=False,
        mlp=False,
        norm="none",
        scale_scores=scale_scores,
    )
    model = LanguageModel(cfg)
    c = a * math.sqrt(D) if scale_scores else a
    with torch.no_grad():
        model.tok.weight.copy_(torch.eye(D))
        qkv = model.blocks[0].mixer.qkv.weight  # (3D, D): q, k, v rows stacked
        qkv[:D] = c * torch.eye(D)
        qkv[D : 2 * D] = torch.eye(D)
    return model


def _expected(a: float) -> dict[str, float]:
    """Closed forms for scores a on the diagonal, 0 below it, rows i = 0..T-1.

    Causal entries: T of value a among K = T(T+1)/2, so std = a sqrt(p (1 - p)), p = T/K.
    Row i: weight w = e^a / (e^a + i) on itself, 1 / (e^a + i) on each of its i keys.
    """
    p = T / (T * (T + 1) / 2)
    entropies, onehot = [], 0
    for i in range(T):
        z = math.exp(a) + i
        w_self, w_other = math.exp(a) / z, 1 / z
        entropies.append(-w_self * math.log(w_self) - i * w_other * math.log(w_other))
        onehot += w_self > 0.99
    return {
        "scores/std": a * math.sqrt(p * (1 - p)),
        "attn/entropy": sum(entropies) / T,
        "attn/onehot_frac": onehot / T,
    }


@pytest.mark.parametrize("scale_scores", [True, False])
def test_a_hand_built_head_gives_the_closed_form_statistics(scale_scores):
    a = math.log(99 * 3.5)  # rows 0..3 put more than 0.99 on themselves, rows 4..7 do not
    model = _hand_built_head(a, scale_scores)
    inputs = torch.arange(T).repeat(3, 1)  # (B, T): three identical windows
    stats = attention_statistics(model, inputs, prefix="init/")
    expected = _expected(a)
    assert expected["attn/onehot_frac"] == 0.5
    assert set(stats) == {f"init/{name}/block_00/head_00" for name in expected}
    for name, value in expected.items():
        assert stats[f"init/{name}/block_00/head_00"] == pytest.approx(value, rel=1e-5)


def test_every_block_and_head_gets_each_statistic():
    cfg = ModelConfig(vocab_size=16, d_model=16, n_head=4, n_layer=2, block_size=T)
    model = build_initial_model(cfg, seed=0)
    stats = attention_statistics(model, torch.randint(0, 16, (2, T)))
    assert len(stats) == 3 * 2 * 4
    assert "attn/onehot_frac/block_01/head_03" in stats
    assert all(math.isfinite(v) for v in stats.values())


def test_the_uniform_mean_has_no_spread_and_the_entropy_of_each_prefix():
    cfg = ModelConfig(vocab_size=16, d_model=16, n_head=1, block_size=T, mixer="uniform")
    stats = attention_statistics(build_initial_model(cfg, seed=0), torch.randint(0, 16, (2, T)))
    assert stats["scores/std/block_00/head_00"] == 0.0
    expected_entropy = sum(math.log(i + 1) for i in range(T)) / T
    assert stats["attn/entropy/block_00/head_00"] == pytest.approx(expected_entropy, rel=1e-6)
    assert stats["attn/onehot_frac/block_00/head_00"] == pytest.approx(1 / T)  # the first row


def test_a_model_without_a_mixer_has_no_statistics():
    cfg = ModelConfig(vocab_size=16, d_model=16, block_size=T, mixer="none", position="none")
    assert attention_statistics(build_initial_model(cfg, seed=0), torch.zeros(1, T).long()) == {}
