"""A table's ratio cell prints its numbers as the verdict of the same comparison does."""

import math
import statistics

from attnlab.report.content import ratio_cell
from attnlab.verdicts.number_format import fmt

# E08.1's per-seed ratios (undivided / divided at d_k = 32) as the record printed them: an
# interval whose lower end lies just under 1.
E08_RATIOS = [1.03, 1.009, 1.01, 1.028, 1.01, 0.9956, 1.044, 0.9908, 1.001, 1.001]
T_975_DF9 = 2.262157  # Student's t, 97.5th percentile, 9 degrees of freedom (printed tables)


def test_an_interval_just_under_one_is_not_rounded_up_to_one():
    undivided = {1337 + i: ratio for i, ratio in enumerate(E08_RATIOS)}
    divided = {seed: 1.0 for seed in undivided}
    logs = [math.log(ratio) for ratio in E08_RATIOS]
    centre = statistics.mean(logs)
    half = T_975_DF9 * statistics.stdev(logs) / math.sqrt(len(logs))
    low, high = math.exp(centre - half), math.exp(centre + half)

    cell = ratio_cell(undivided, divided)

    assert low < 1 < high
    assert cell == f"{fmt(math.exp(centre))} [{fmt(low)}, {fmt(high)}] (10)"
    assert cell.startswith("1.012 [0.99")
    assert cell.detail.startswith("seed 1337: 1.03, seed 1338: 1.009,")
