"""E13: one model evaluated at several lengths; learned rows past the training length."""

import math

import pytest
import torch
import torch.nn.functional as F

from attnlab.evaluation import build_initial_model
from attnlab.metrics import perplexity_by_length
from attnlab.models import ModelConfig

V = 32
TRAIN_LENGTH, LONGEST = 64, 256


def _cfg(position: str) -> ModelConfig:
    return ModelConfig(
        vocab_size=V,
        d_model=16,
        n_head=2,
        block_size=TRAIN_LENGTH,
        max_positions=LONGEST,
        position=position,
    )


@pytest.mark.parametrize("position", ["none", "learned", "sinusoidal", "rope", "alibi"])
def test_a_model_built_at_64_evaluates_at_every_length_up_to_256(position):
    model = build_initial_model(_cfg(position), seed=0)
    tokens = torch.randint(0, V, (1200,), generator=torch.Generator().manual_seed(0))
    results = perplexity_by_length(model, tokens, [64, 128, 256], batch_size=2)
    assert list(results) == [64, 128, 256]
    for result in results.values():
        assert result.tokens == 1199
        assert math.isfinite(result.ppl) and 1.0 < result.ppl < 10 * V


def test_a_learned_table_refuses_lengths_it_does_not_hold():
    model = build_initial_model(_cfg("learned"), seed=0)
    tokens = torch.randint(0, V, (600,))
    with pytest.raises(ValueError, match="max_positions"):
        perplexity_by_length(model, tokens, [512], batch_size=1)


@pytest.mark.parametrize("weight_decay", [0.0, 0.01])
def test_learned_rows_past_the_training_length_keep_their_init_up_to_weight_decay(weight_decay):
    """Rows past 64 get an exactly-zero gradient, so Adam's update for them is exactly zero.

    AdamW's decoupled weight decay still shrinks every row it holds by (1 - lr * wd) per
    step, the untrained ones included: with P0's default decay the rows past the training
    length are their init times (1 - lr * wd)^steps (0.97 after 3000 steps at P0's lr), a
    uniform rescaling and nothing learned.
    """
    model = build_initial_model(_cfg("learned"), seed=0).train()
    table = model.pos.table.weight
    init = table.detach().clone()
    lr, steps = 1e-2, 5
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    generator = torch.Generator().manual_seed(1)
    for _ in range(steps):
        windows = torch.randint(0, V, (4, TRAIN_LENGTH + 1), generator=generator)
        logits = model(windows[:, :-1])  # (B, T, V)
        loss = F.cross_entropy(logits.flatten(0, 1), windows[:, 1:].flatten())
        optimizer.zero_grad()
        loss.backward()
        assert torch.count_nonzero(table.grad[TRAIN_LENGTH:]) == 0
        optimizer.step()
    shrink = (1 - lr * weight_decay) ** steps
    torch.testing.assert_close(table[TRAIN_LENGTH:].detach(), init[TRAIN_LENGTH:] * shrink)
    assert not torch.allclose(table[:TRAIN_LENGTH], init[:TRAIN_LENGTH] * shrink)
