"""Position schemes against their definitions (E13), and the learned table beyond training."""

import math

import pytest
import torch
import torch.nn.functional as F

from attnlab.models import (
    AlibiBias,
    LanguageModel,
    LearnedPosition,
    ModelConfig,
    RotaryPosition,
    SinusoidalPosition,
    alibi_slopes,
)


def test_sinusoidal_matches_its_closed_form():
    d, T = 16, 128
    expected = torch.empty(T, d)
    for p in range(T):
        for i in range(d // 2):
            angle = p / 10000 ** (2 * i / d)
            expected[p, 2 * i] = math.sin(angle)
            expected[p, 2 * i + 1] = math.cos(angle)
    # float32 angles up to 127 rad are rounded to ~8e-6 (half an ulp), hence not 1e-6.
    torch.testing.assert_close(SinusoidalPosition(d)(T), expected, atol=2e-5, rtol=0)


def test_sinusoidal_has_no_parameters_and_any_length():
    pe = SinusoidalPosition(32)
    assert list(pe.parameters()) == []
    assert pe(1000).shape == (1000, 32)


# Hand-computed from the ALiBi paper: start = 2^(-8/n), slopes start^1 ... start^n; for 6
# heads the 4-head slopes, then every other 8-head slope (1/2, 1/8) to make up 6.
PUBLISHED_SLOPES = {
    4: [1 / 4, 1 / 16, 1 / 64, 1 / 256],
    8: [1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256],
    6: [1 / 4, 1 / 16, 1 / 64, 1 / 256, 1 / 2, 1 / 8],
    1: [1 / 256],
}


@pytest.mark.parametrize("n_head", sorted(PUBLISHED_SLOPES))
def test_alibi_slopes_equal_the_published_sequence(n_head):
    assert alibi_slopes(n_head) == pytest.approx(PUBLISHED_SLOPES[n_head], rel=1e-12)


def test_alibi_bias_penalises_distance_linearly_per_head():
    bias = AlibiBias(4)(6)  # (H, T, T)
    assert bias.shape == (4, 6, 6)
    for h, slope in enumerate(PUBLISHED_SLOPES[4]):
        for i in range(6):
            for j in range(i + 1):
                assert bias[h, i, j].item() == pytest.approx(-slope * (i - j))


def _rotate_by_complex(x: torch.Tensor) -> torch.Tensor:
    """Reference RoPE: pair dimension i with i + D/2 as one complex number, times e^(i p theta)."""
    T, D = x.shape[-2:]
    theta = 10000.0 ** (-torch.arange(0, D, 2, dtype=torch.float64) / D)
    angle = torch.arange(T, dtype=torch.float64)[:, None] * theta  # (T, D/2)
    x = x.double()
    z = torch.complex(x[..., : D // 2], x[..., D // 2 :]) * torch.polar(
        torch.ones_like(angle), angle
    )
    return torch.cat((z.real, z.imag), dim=-1).float()


def test_rope_matches_the_complex_rotation():
    q, k = torch.randn(2, 3, 10, 8), torch.randn(2, 3, 10, 8)
    q_rot, k_rot = RotaryPosition(8)(q, k)
    torch.testing.assert_close(q_rot, _rotate_by_complex(q), atol=1e-5, rtol=0)
    torch.testing.assert_close(k_rot, _rotate_by_complex(k), atol=1e-5, rtol=0)


def test_rope_makes_scores_depend_only_on_the_offset():
    T, D = 24, 16
    q = torch.randn(D).expand(1, 1, T, D)  # the same query at every position
    k = torch.randn(D).expand(1, 1, T, D)  # the same key at every position
    q_rot, k_rot = RotaryPosition(D)(q, k)
    scores = (q_rot @ k_rot.transpose(-2, -1))[0, 0]  # (T, T): query m, key n
    # Shifting both positions by one leaves the score unchanged: scores are Toeplitz.
    torch.testing.assert_close(scores[1:, 1:], scores[:-1, :-1], atol=1e-4, rtol=0)
    # ...and the score does depend on the offset (else the test above proves nothing).
    assert (scores[-1, 0] - scores[0, 0]).abs() > 1e-2


def test_rope_preserves_norms():
    q, k = torch.randn(2, 4, 50, 32), torch.randn(2, 4, 50, 32)
    q_rot, k_rot = RotaryPosition(32)(q, k)
    torch.testing.assert_close(q_rot.norm(dim=-1), q.norm(dim=-1))
    torch.testing.assert_close(k_rot.norm(dim=-1), k.norm(dim=-1))
    assert not torch.allclose(q_rot[:, :, 1:], q[:, :, 1:])  # it did rotate


def test_learned_positions_beyond_training_exist_and_get_no_gradient():
    cfg = ModelConfig(vocab_size=50, d_model=16, n_head=2, block_size=8, max_positions=32)
    model = LanguageModel(cfg)
    assert model.pos.table.weight.shape == (32, 16)
    idx = torch.randint(0, 50, (4, cfg.block_size + 1))
    logits = model(idx[:, :-1])
    F.cross_entropy(logits.flatten(0, 1), idx[:, 1:].flatten()).backward()
    grad = model.pos.table.weight.grad
    assert torch.count_nonzero(grad[cfg.block_size :]) == 0
    assert torch.count_nonzero(grad[: cfg.block_size].abs().sum(dim=1)) == cfg.block_size


def test_learned_position_p_is_row_p_of_the_table():
    pe = LearnedPosition(32, 4)
    assert torch.equal(pe(20), pe.table.weight[:20])


def test_learned_positions_refuse_a_longer_sequence():
    with pytest.raises(ValueError, match="max_positions"):
        LearnedPosition(8, 4)(9)
