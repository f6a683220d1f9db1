"""The average the story starts from: E03 (shuffle) and E04 (three ways to average).

E03: the causal mean's last row is the mean of the whole window, so permuting the window
leaves it unchanged up to float rounding; the earlier rows (means of different prefixes) do
change. E04: the running mean computed by a loop, by a lower-triangular matmul and by a
softmax over a -inf-masked matrix of zeros agree, and the averaging matrix is printed.
"""

from dataclasses import dataclass

import torch
from torch import Tensor

from attnlab.models import CausalMean
from attnlab.probes.records import Value
from attnlab.probes.seeding import generator


@dataclass(frozen=True)
class ShuffleResult:
    """E03: per permutation, how much the last row and the earlier rows moved."""

    tokens: int
    width: int
    last_row_diffs: list[float]
    earlier_rows_diffs: list[float]

    def metrics(self) -> dict[str, Value]:
        """The worst last-row diff (the claim) and the smallest earlier-row change."""
        return {
            "e03/last_row_max_abs_diff": max(self.last_row_diffs),
            "e03/earlier_rows_min_max_abs_diff": min(self.earlier_rows_diffs),
        }

    def table(self) -> list[dict[str, Value]]:
        """One row per permutation."""
        return [
            {
                "permutation": i,
                "tokens": self.tokens,
                "width": self.width,
                "last_row_max_abs_diff": last,
                "earlier_rows_max_abs_diff": earlier,
            }
            for i, (last, earlier) in enumerate(
                zip(self.last_row_diffs, self.earlier_rows_diffs, strict=True)
            )
        ]


def shuffle_probe(tokens: int, width: int, permutations: int, seed: int) -> ShuffleResult:
    """Run E03: the models' `CausalMean` on a random window and on shuffles of it.

    Args:
        tokens: Window length T (at least 2, so there are earlier rows to compare).
        width: Width C of each token vector.
        permutations: How many random permutations to try.
        seed: The params seed.
    """
    g = generator(seed, "e03")
    mean = CausalMean()
    x = torch.randn(1, tokens, width, generator=g)  # (1, T, C)
    y = mean(x)  # (1, T, C)
    last, earlier = [], []
    for _ in range(permutations):
        perm = torch.randperm(tokens, generator=g)
        y_perm = mean(x[:, perm])  # (1, T, C)
        last.append((y_perm[:, -1] - y[:, -1]).abs().max().item())
        earlier.append((y_perm[:, :-1] - y[:, :-1]).abs().max().item())
    return ShuffleResult(tokens, width, last, earlier)


def average_by_loop(x: Tensor) -> Tensor:
    """Row t is the mean of x[:, : t + 1]: the definition, one prefix at a time."""
    return torch.stack([x[:, : t + 1].mean(dim=1) for t in range(x.shape[1])], dim=1)


def averaging_matrix(tokens: int) -> Tensor:
    """The (T, T) lower-triangular matrix whose row t holds 1 / (t + 1) on the first t + 1 keys."""
    ones = torch.ones(tokens, tokens).tril()  # (T, T)
    return ones / ones.sum(dim=1, keepdim=True)


def softmax_averaging_matrix(tokens: int) -> Tensor:
    """The same matrix as the softmax of zero scores with the future masked by -inf.

    Equal scores give equal weights, and exp(-inf) = 0 removes the future exactly: the
    average is attention whose scores carry no information.
    """
    future = torch.ones(tokens, tokens, dtype=torch.bool).triu(1)  # (T, T)
    return torch.zeros(tokens, tokens).masked_fill(future, float("-inf")).softmax(dim=-1)


@dataclass(frozen=True)
class AveragesResult:
    """E04: the softmax averaging matrix and, per output row, each method's diff to the loop."""

    matrix: list[list[float]]
    diffs: dict[str, list[float]]  # method -> per output row max |diff| vs the loop

    def metrics(self) -> dict[str, Value]:
        """Each method's worst diff against the loop over the whole output."""
        return {f"e04/loop_vs_{method}": max(row) for method, row in self.diffs.items()}

    def table(self) -> list[dict[str, Value]]:
        """The printed matrix: one row per query position, one column per key, then diffs."""
        rows: list[dict[str, Value]] = []
        for t, weights in enumerate(self.matrix):
            row: dict[str, Value] = {"query": t}
            row.update({f"key_{j}": w for j, w in enumerate(weights)})
            row.update({f"loop_vs_{m}": d[t] for m, d in self.diffs.items()})
            rows.append(row)
        return rows


def averages_probe(tokens: int, width: int, seed: int) -> AveragesResult:
    """Run E04: loop, matmul, masked softmax and the models' `CausalMean` on one window."""
    x = torch.randn(1, tokens, width, generator=generator(seed, "e04"))  # (1, T, C)
    reference = average_by_loop(x)  # (1, T, C)
    weights = softmax_averaging_matrix(tokens)  # (T, T)
    outputs = {
        "matmul": averaging_matrix(tokens) @ x,  # (1, T, C)
        "softmax": weights @ x,  # (1, T, C)
        "causal_mean": CausalMean()(x),  # (1, T, C): the cumulative-sum path the models train
    }
    diffs = {
        name: (y - reference).abs().amax(dim=(0, 2)).tolist()  # (T,) per output row
        for name, y in outputs.items()
    }
    return AveragesResult(matrix=weights.tolist(), diffs=diffs)
