"""The statistics the verdicts rest on, against textbook values computed independently."""

import math

import pytest

from attnlab.verdicts.stats import (
    binomial_cdf,
    paired,
    summarise,
    t_central,
    t_quantile,
)

# Two-sided 95 % critical values of Student's t (any printed table, e.g. Fisher & Yates).
T_TABLE = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 9: 2.262, 10: 2.228,
           20: 2.086, 29: 2.045, 30: 2.042, 60: 2.000, 120: 1.980}  # fmt: skip


@pytest.mark.parametrize(("df", "expected"), T_TABLE.items())
def test_the_t_quantile_matches_the_printed_table(df, expected):
    assert t_quantile(0.95, df) == pytest.approx(expected, abs=5e-4)


def test_the_t_distribution_has_its_closed_forms_at_one_and_two_degrees_of_freedom():
    for t in (0.3, 1.0, 4.0):
        assert t_central(t, 1) == pytest.approx(2 / math.pi * math.atan(t), abs=1e-12)  # Cauchy
        assert t_central(t, 2) == pytest.approx(t / math.sqrt(2 + t * t), abs=1e-12)
    assert t_quantile(0.99, 1) == pytest.approx(63.657, abs=1e-3)
    with pytest.raises(ValueError, match="df >= 1"):
        t_quantile(0.95, 0)


def test_a_summary_has_the_mean_the_sample_std_and_the_t_interval():
    summary = summarise({3: 3.0, 1: 1.0, 2: 2.0})
    assert list(summary.values) == [1, 2, 3]  # in seed order
    assert (summary.n, summary.mean, summary.std) == (3, 2.0, 1.0)
    assert summary.half_width == pytest.approx(4.303 / math.sqrt(3), abs=1e-3)
    assert summary.interval == pytest.approx((2 - 2.4843, 2 + 2.4843), abs=1e-3)


def test_one_seed_has_no_spread_and_no_interval():
    summary = summarise({7: 5.0})
    assert summary.std is None and summary.interval is None and summary.half_width is None
    with pytest.raises(ValueError, match="no values"):
        summarise({})


def test_the_seeds_needed_shrink_the_interval_past_the_threshold():
    summary = summarise({1: 1.0, 2: 1.2, 3: 0.9})  # mean 1.0333, std 0.1528
    needed = summary.seeds_needed(1.2)
    assert needed is not None
    assert t_quantile(0.95, needed - 1) * summary.std / math.sqrt(needed) < 1.2 - summary.mean
    assert t_quantile(0.95, needed - 2) * summary.std / math.sqrt(needed - 1) >= 1.2 - summary.mean
    assert summarise({1: 2.0, 2: 2.0}).seeds_needed(1.0) is None  # no spread: nothing to shrink


def test_pairing_keeps_only_the_seeds_both_sides_have():
    assert paired({1: 10.0, 2: 20.0, 3: 30.0}, {2: 2.0, 3: 3.0, 4: 4.0}) == {
        2: (20.0, 2.0),
        3: (30.0, 3.0),
    }
    assert paired({1: 1.0}, {2: 2.0}) == {}


def test_a_value_recorded_once_without_a_seed_pairs_with_every_seed():
    assert paired({None: 5.0}, {1: 1.0, 2: 2.0}) == {1: (5.0, 1.0), 2: (5.0, 2.0)}
    assert paired({1: 1.0}, {None: 4.0}) == {1: (1.0, 4.0)}


def test_the_binomial_tail_is_exact():
    assert binomial_cdf(1, 10) == 11 / 1024  # (1 + 10) / 2^10
    assert binomial_cdf(8, 20) == pytest.approx(0.2517223358, abs=1e-10)  # textbook table
    assert binomial_cdf(0, 5, 0.2) == pytest.approx(0.8**5, abs=1e-15)
    assert binomial_cdf(-1, 10) == 0.0 and binomial_cdf(10, 10) == 1.0
    # 118 of 240 right at chance 1/2: P(X <= 118) = 0.4233 (log-gamma sum; normal 0.4232).
    assert binomial_cdf(118, 240) == pytest.approx(0.423251, abs=1e-6)
