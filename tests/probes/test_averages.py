"""E03 and E04: the causal mean ignores order, and three ways to average agree."""

import pytest
import torch

from attnlab.probes.averages import (
    average_by_loop,
    averages_probe,
    averaging_matrix,
    shuffle_probe,
    softmax_averaging_matrix,
)


def test_shuffling_the_window_leaves_the_last_row_alone():
    result = shuffle_probe(tokens=64, width=32, permutations=5, seed=0)
    assert max(result.last_row_diffs) <= 1e-6
    # ...while every shuffle moves the earlier rows (means of other prefixes): the
    # probe can tell a permutation that does something from one that does nothing.
    assert min(result.earlier_rows_diffs) > 1e-2
    assert len(result.table()) == 5


def test_the_three_averages_agree_with_the_loop():
    result = averages_probe(tokens=6, width=8, seed=0)
    for method in ("matmul", "softmax", "causal_mean"):
        assert result.metrics()[f"e04/loop_vs_{method}"] <= 1e-6


def test_the_printed_matrix_is_the_causal_averaging_matrix():
    rows = averages_probe(tokens=6, width=8, seed=0).table()
    assert len(rows) == 6
    for t, row in enumerate(rows):
        weights = [row[f"key_{j}"] for j in range(6)]
        assert weights[: t + 1] == pytest.approx([1 / (t + 1)] * (t + 1))
        assert weights[t + 1 :] == [0.0] * (5 - t)  # exactly zero: exp(-inf) = 0


def test_matmul_and_masked_softmax_build_the_same_matrix():
    torch.testing.assert_close(softmax_averaging_matrix(9), averaging_matrix(9))


def test_the_loop_is_the_definition():
    x = torch.arange(12.0).view(1, 4, 3)  # (1, T, C)
    assert average_by_loop(x)[0, 1].tolist() == [1.5, 2.5, 3.5]
