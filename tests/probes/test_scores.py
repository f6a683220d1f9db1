"""E05-E07: Var(q.k) = d, and what dividing by sqrt(d) does to a row's softmax."""

import math

import pytest
import torch

from attnlab.probes.scores import (
    EffectiveTokens,
    FrozenRows,
    dot_product_probe,
    row_stats,
    score_rows,
    softmax_rows_probe,
)
from attnlab.probes.seeding import generator

DIMS = [4, 16, 64, 256, 1024]


def test_var_of_q_dot_k_is_d_within_five_percent_at_20000_pairs():
    result = dot_product_probe(DIMS, pairs=20_000, seed=1337)
    for s in result.stats:
        assert s.var / s.d == pytest.approx(1.0, rel=0.05), s
        assert s.std == pytest.approx(math.sqrt(s.d), rel=0.03)
    assert result.metrics()["e05/sqrt_d@64"] == 8.0


@pytest.fixture(scope="module")
def draw():
    return softmax_rows_probe(
        DIMS, rows=400, row_length=64, frozen_above=0.99, example_d=64, seed=1337
    )


def _by(draw, divided):
    return [s for s in draw.stats if s.divided == divided]


def test_divided_jacobian_trace_is_about_0_96_at_every_d(draw):
    # Divided, a row's 64 scores are ~N(0, 1), so with Z = sum exp(s) ~ 64 e^(1/2):
    # sum w^2 ~ 64 e^2 / Z^2 = e / 64 ~ 0.042, and sum w (1 - w) = 1 - sum w^2 ~ 0.958.
    for s in _by(draw, divided=True):
        assert s.mean_jacobian_trace == pytest.approx(1 - math.e / 64, abs=0.01), s


def test_the_estimate_holds_for_plain_gaussian_rows():
    g = torch.Generator().manual_seed(0)
    s = row_stats(torch.randn(4000, 64, generator=g), d=1, divided=True, frozen_above=0.99)
    assert s.mean_jacobian_trace == pytest.approx(0.96, abs=0.005)


def test_undivided_jacobian_trace_falls_with_d(draw):
    traces = [s.mean_jacobian_trace for s in _by(draw, divided=False)]
    assert all(a > b for a, b in zip(traces, traces[1:], strict=False)), traces
    assert traces[-1] < 0.15


def test_frozen_fraction_rises_with_d_undivided_and_stays_zero_divided(draw):
    frozen = [s.frozen_fraction for s in _by(draw, divided=False)]
    assert all(a <= b for a, b in zip(frozen, frozen[1:], strict=False)), frozen
    assert frozen[0] < 0.01 and frozen[-1] > 0.5
    assert all(s.frozen_fraction <= 0.0025 for s in _by(draw, divided=True))


def test_effective_tokens_stay_put_divided_and_collapse_undivided(draw):
    divided = [s.mean_effective_tokens for s in _by(draw, divided=True)]
    undivided = [s.median_effective_tokens for s in _by(draw, divided=False)]
    assert max(divided) - min(divided) < 5 and min(divided) > 30
    assert undivided[-1] < 1.1 < 10 < undivided[0]


def test_the_example_row_is_printed_with_both_softmaxes(draw):
    rows = EffectiveTokens(draw).example_table()
    assert [r["key"] for r in rows] == list(range(64))
    assert sum(r["weight_divided"] for r in rows) == pytest.approx(1.0)
    assert max(r["weight_undivided"] for r in rows) > max(r["weight_divided"] for r in rows)


def test_tables_and_metrics_cover_every_d_both_ways(draw):
    assert len(EffectiveTokens(draw).table()) == len(FrozenRows(draw).table()) == 2 * len(DIMS)
    assert "e07/undivided/frozen_fraction@1024" in FrozenRows(draw).metrics()
    assert "e06/divided/median_effective_tokens@4" in EffectiveTokens(draw).metrics()


def test_a_row_does_not_depend_on_how_many_rows_are_drawn():
    few = score_rows(3, 64, 16, generator(7, "x"))
    many = score_rows(10, 64, 16, generator(7, "x"))
    torch.testing.assert_close(few, many[:3])
