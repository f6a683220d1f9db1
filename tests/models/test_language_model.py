"""The assembled LanguageModel: causality, norm placement, lengths, maps, loss at init."""

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from attnlab.models import LanguageModel, ModelConfig

V, T = 64, 12
TINY = {"vocab_size": V, "d_model": 32, "n_head": 4, "block_size": T}


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def _tiny(**overrides) -> LanguageModel:
    return LanguageModel(ModelConfig(**{**TINY, **overrides})).eval()


MIXER_POSITIONS = [
    (mixer, position)
    for mixer in ("none", "uniform", "attention")
    for position in ("none", "learned", "sinusoidal", "rope", "alibi")
    if mixer == "attention" or position not in ("rope", "alibi")
]


@pytest.mark.parametrize(("mixer", "position"), MIXER_POSITIONS)
def test_changing_token_t_leaves_earlier_outputs_unchanged(mixer, position):
    model = _tiny(mixer=mixer, position=position, n_layer=2)
    idx = torch.randint(0, V, (3, T))
    changed = idx.clone()
    t = 5
    changed[:, t] = (idx[:, t] + 1) % V
    with torch.no_grad():
        before, after = model(idx), model(changed)
    torch.testing.assert_close(after[:, :t], before[:, :t], atol=1e-6, rtol=0)
    assert not torch.allclose(after[:, t], before[:, t])
    if mixer != "none":  # the change must reach the later positions, or nothing mixes
        assert not torch.allclose(after[:, -1], before[:, -1])


@pytest.mark.parametrize(
    "overrides",
    [
        {"position": "learned"},
        {"position": "alibi"},
        {"position": "rope", "n_head": 1, "d_head": 48, "norm": "post"},
        {"mixer": "uniform", "position": "sinusoidal", "scale_scores": False},
    ],
)
def test_explicit_path_gives_the_same_logits(overrides):
    model = _tiny(n_layer=2, **overrides)
    idx = torch.randint(0, V, (2, T))
    with torch.no_grad():
        records = []
        explicit = model._run(idx, records=records)
        torch.testing.assert_close(model(idx), explicit, atol=1e-5, rtol=0)
    assert len(records) == 2


def test_attention_maps_one_record_per_block():
    idx = torch.randint(0, V, (2, T))
    attention = _tiny(n_layer=3).attention_maps(idx)
    assert [r.weights.shape for r in attention] == [(2, 4, T, T)] * 3
    uniform = _tiny(mixer="uniform", n_layer=2).attention_maps(idx)
    assert [r.weights.shape for r in uniform] == [(2, 1, T, T)] * 2
    assert _tiny(mixer="none").attention_maps(idx) == []
    assert not attention[0].weights.requires_grad


def _layer_norms(model):
    return [m for m in model.modules() if isinstance(m, nn.LayerNorm)]


def test_norm_placements_have_the_layer_norms_they_promise():
    assert len(_layer_norms(_tiny(norm="pre", n_layer=2))) == 5  # ln1, ln2 per block + ln_f
    assert len(_layer_norms(_tiny(norm="post", n_layer=2))) == 4  # no ln_f
    assert _layer_norms(_tiny(norm="none", n_layer=2)) == []


def test_pre_and_post_norm_are_observably_different():
    pre, post = _tiny(norm="pre"), _tiny(norm="post")
    missing, unexpected = post.load_state_dict(pre.state_dict(), strict=False)
    assert (missing, unexpected) == ([], ["ln_f.weight", "ln_f.bias"])
    idx = torch.randint(0, V, (2, T))
    with torch.no_grad():
        assert not torch.allclose(pre(idx), post(idx), atol=1e-3)
        x = 3.0 * torch.randn(2, T, 32) + 1.0
        y_post, y_pre = post.blocks[0](x), pre.blocks[0](x)
    # Post-norm's block ends in a LayerNorm (unit gain, zero bias at init); pre-norm's doesn't.
    torch.testing.assert_close(y_post.mean(-1), torch.zeros(2, T), atol=1e-5, rtol=0)
    torch.testing.assert_close(y_post.var(-1, unbiased=False), torch.ones(2, T), atol=1e-3, rtol=0)
    assert y_pre.var(-1, unbiased=False).mean() > 2.0


@pytest.mark.parametrize("position", ["none", "learned", "sinusoidal", "rope", "alibi"])
def test_forward_up_to_max_positions(position):
    model = _tiny(position=position, max_positions=64)
    assert model(torch.randint(0, V, (1, 64))).shape == (1, 64, V)


@pytest.mark.parametrize("position", ["none", "sinusoidal", "rope", "alibi"])
def test_non_learned_positions_run_at_any_length(position):
    logits = _tiny(position=position)(torch.randint(0, V, (1, 300)))
    assert logits.shape == (1, 300, V)
    assert torch.isfinite(logits).all()


def test_learned_positions_stop_at_max_positions():
    with pytest.raises(ValueError, match="max_positions"):
        _tiny(position="learned", max_positions=64)(torch.randint(0, V, (1, 65)))


def test_tied_output_layer_shares_the_embedding_and_has_no_bias():
    model = _tiny(tie_embeddings=True)
    assert model.head.weight is model.tok.weight
    assert model.head.bias is None
    assert model.config.tie_embeddings


def test_dropout_is_active_in_training_only():
    model = _tiny(dropout=0.2, n_layer=2).train()
    idx = torch.randint(0, V, (2, T))
    assert not torch.allclose(model(idx), model(idx))
    model.eval()
    torch.testing.assert_close(model(idx), model(idx), atol=0, rtol=0)


def test_p0_model_starts_at_loss_ln_vocab():
    """At init the loss is about ln V: the model knows nothing yet.

    ln_f leaves each feature with unit variance and the head's Kaiming-uniform weights have
    variance 1/(3d), so the logits have variance s^2 ~ 1/3 and, for small s, the expected
    loss is ln V + s^2 / 2 ~ ln V + 0.17. A tolerance of 0.3 admits that and the sampling
    noise of 64 x 128 tokens, and still fails for a model that is confident at init: with
    the N(0, 1) embedding tied as the head, each position predicts its own token with a
    logit of about d = 128 and the loss is about ln V + 80.
    """
    model = LanguageModel(ModelConfig()).eval()
    idx = torch.randint(0, 1024, (64, 129))
    with torch.no_grad():
        logits = model(idx[:, :-1])
    loss = F.cross_entropy(logits.flatten(0, 1), idx[:, 1:].flatten()).item()
    assert abs(loss - math.log(1024)) < 0.3
