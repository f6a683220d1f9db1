"""P0's perplexity: exact on models whose probabilities are known, every token scored once."""

import math

import pytest
import torch

from attnlab.metrics import cut_windows, perplexity, sample_windows, score_windows
from attnlab.models import LanguageModel, ModelConfig

V = 16
N = 1000  # N - 1 = 999 targets: 15 windows of 64 and a tail of 39


def _stream(n: int = N, seed: int = 0) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(0, V, (n,), generator=generator).to(torch.uint16)


def _uniform_model() -> LanguageModel:
    """The full P0 block with a zeroed output layer: every logit 0, so p = 1/V everywhere."""
    model = LanguageModel(ModelConfig(vocab_size=V, d_model=16, n_head=2, block_size=64))
    with torch.no_grad():
        model.head.weight.zero_()
        model.head.bias.zero_()
    return model


def _bigram_model(log_probs: torch.Tensor) -> LanguageModel:
    """A no-context model whose logits are ``log_probs[current]``: p(next | current) by hand.

    The embedding is the identity (d_model = V) and the output layer's weight is the
    transposed table, so logits = log P(. | current) exactly, whatever the window.
    """
    cfg = ModelConfig(
        vocab_size=V, d_model=V, n_head=1, mixer="none", position="none", mlp=False, norm="none"
    )
    model = LanguageModel(cfg)
    with torch.no_grad():
        model.tok.weight.copy_(torch.eye(V))
        model.head.weight.copy_(log_probs.T)  # (out, in): row v' holds log P(v' | .)
        model.head.bias.zero_()
    return model


def test_the_windows_score_every_token_but_the_first_exactly_once_in_order():
    tokens = _stream()
    cut = cut_windows(tokens, 64)
    assert cut.full.shape == (15, 65)
    assert cut.tail is not None and cut.tail.shape == (1, 40)
    targets = torch.cat([cut.full[:, 1:].flatten(), cut.tail[0, 1:]])
    assert torch.equal(targets, tokens[1:].long())
    inputs = torch.cat([cut.full[:, :-1].flatten(), cut.tail[0, :-1]])
    assert torch.equal(inputs, tokens[:-1].long())
    assert cut.targets == N - 1


def test_no_tail_when_the_targets_fill_whole_windows():
    cut = cut_windows(_stream(n=3 * 64 + 1), 64)
    assert cut.full.shape == (3, 65) and cut.tail is None and cut.targets == 3 * 64


def test_a_stream_shorter_than_one_window_is_refused():
    with pytest.raises(ValueError, match="no window"):
        cut_windows(_stream(n=64), 64)


def test_a_uniform_model_has_perplexity_exactly_the_vocabulary_size():
    result = perplexity(_uniform_model(), _stream(), length=64, batch_size=4)
    assert result.tokens == N - 1
    assert result.ppl == pytest.approx(V, rel=1e-6)
    assert result.nll == pytest.approx(math.log(V), rel=1e-6)


def test_a_bigram_model_gets_the_nll_computed_by_hand():
    generator = torch.Generator().manual_seed(1)
    log_probs = torch.randn(V, V, generator=generator).log_softmax(dim=-1)  # (current, next)
    tokens = _stream()
    pairs = zip(tokens[:-1].tolist(), tokens[1:].tolist(), strict=True)  # (current, next)
    expected = -sum(log_probs[a, b].item() for a, b in pairs) / (N - 1)
    result = perplexity(_bigram_model(log_probs), tokens, length=64, batch_size=4)
    assert result.tokens == N - 1
    # Dropping or double-counting the 39-token tail would move the mean well past this.
    assert result.nll == pytest.approx(expected, rel=1e-5)
    assert result.ppl == pytest.approx(math.exp(expected), rel=1e-5)


def test_the_batch_size_changes_nothing_and_the_mode_is_restored():
    model = LanguageModel(ModelConfig(vocab_size=V, d_model=16, n_head=2, block_size=32)).train()
    tokens = _stream()
    one = perplexity(model, tokens, length=32, batch_size=1)
    many = perplexity(model, tokens, length=32, batch_size=7)
    assert one.tokens == many.tokens == N - 1
    assert one.ppl == pytest.approx(many.ppl, rel=1e-6)
    assert model.training


def test_sample_windows_is_a_fixed_seeded_subset_of_the_p0_windows():
    tokens = _stream()
    chosen = sample_windows(tokens, 64, count=5, seed=3)
    assert torch.equal(chosen, sample_windows(tokens, 64, count=5, seed=3))
    assert not torch.equal(chosen, sample_windows(tokens, 64, count=5, seed=4))
    full = cut_windows(tokens, 64).full
    rows = {tuple(row.tolist()) for row in full}
    assert len({tuple(row.tolist()) for row in chosen}) == 5
    assert all(tuple(row.tolist()) in rows for row in chosen)
    with pytest.raises(ValueError, match="count"):
        sample_windows(tokens, 64, count=16, seed=0)


def test_score_windows_matches_perplexity_on_a_tailless_stream():
    model = _uniform_model()
    tokens = _stream(n=4 * 64 + 1)
    whole = perplexity(model, tokens, 64, batch_size=2)
    windows = score_windows(model, cut_windows(tokens, 64).full, batch_size=3)
    assert windows.tokens == whole.tokens == 256
    assert windows.ppl == pytest.approx(whole.ppl, rel=1e-6)
