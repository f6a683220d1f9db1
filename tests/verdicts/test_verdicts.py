"""Verdicts over seeds on constructed numbers where the answer is known.

An interval clearly above, clearly below and straddling a threshold gives holds, does not
hold and inconclusive; pairing uses the seeds both sides have; one seed is inconclusive;
accuracy against chance is an exact binomial test; exact computations stay point decisions.
"""

import math

import pytest

from attnlab.report import Results
from attnlab.verdicts import FAILS, HOLDS, INCONCLUSIVE, catalogue_claims, judge
from attnlab.verdicts.rules import Ref, all_of, in_range, ratio_in
from attnlab.verdicts.stats import t_quantile

CLAIMS = catalogue_claims()
CLAIM = {claim.id: claim for claim in CLAIMS}


def ladder(mlp: dict, four: dict) -> Results:
    """E02.8 ("the MLP helps") reads ppl(mlp) / ppl(four-heads) per seed."""
    return Results(metrics={
        "ladder-mlp/eval": {s: {"val/ppl": v} for s, v in mlp.items()},
        "ladder-four-heads/eval": {s: {"val/ppl": v} for s, v in four.items()},
    })  # fmt: skip


FOUR = {1: 100.0, 2: 110.0, 3: 90.0}


def test_a_paired_interval_wholly_below_one_holds():
    verdict = judge(CLAIM["E02.8"], ladder({1: 90.0, 2: 100.0, 3: 80.0}, FOUR))
    assert verdict.status == HOLDS and verdict.n == 3
    assert "95 % CI [" in verdict.evidence and "n = 3" in verdict.evidence


def test_a_paired_interval_wholly_above_one_does_not_hold():
    verdict = judge(CLAIM["E02.8"], ladder({1: 110.0, 2: 121.5, 3: 98.0}, FOUR))
    assert verdict.status == FAILS


def test_a_paired_interval_straddling_one_is_inconclusive_and_says_how_many_seeds_would_do():
    verdict = judge(CLAIM["E02.8"], ladder({1: 98.0, 2: 111.0, 3: 89.0}, FOUR))
    assert verdict.status == INCONCLUSIVE and verdict.n == 3
    assert verdict.seeds_needed is not None and verdict.seeds_needed > 3
    assert verdict.variants == ("ladder-mlp", "ladder-four-heads")


def test_pairing_is_by_seed_not_by_the_spread_of_each_side():
    # Seeds differ a lot (110 vs 90) but every seed's mlp is exactly 2 % below its own
    # four-heads run: paired, the interval is a point below 1. Unpaired it would straddle.
    verdict = judge(CLAIM["E02.8"], ladder({s: 0.98 * v for s, v in FOUR.items()}, FOUR))
    assert verdict.status == HOLDS and verdict.interval == "[0.98, 0.98]"


def test_pairing_uses_the_matching_seeds_only():
    # Seed 4 of mlp and seed 3 of four-heads have no partner: they must not count.
    mlp = {1: 98.0, 2: 107.8, 4: 500.0}
    verdict = judge(CLAIM["E02.8"], ladder(mlp, FOUR))
    assert verdict.n == 2 and verdict.status == HOLDS
    assert "per seed 1: 0.98, 2: 0.98" in verdict.evidence and "4:" not in verdict.evidence


def test_the_means_shown_are_over_the_paired_seeds_only():
    # mlp's seed 4 has no four-heads partner: its 500 must not enter the mean shown.
    verdict = judge(CLAIM["E02.8"], ladder({1: 98.0, 2: 107.8, 4: 500.0}, FOUR))
    assert "= 102.9," in verdict.evidence and "= 105:" in verdict.evidence


def test_no_shared_seed_cannot_be_decided():
    verdict = judge(CLAIM["E02.8"], ladder({5: 90.0, 6: 80.0}, FOUR))
    assert verdict.status == "not run" and "share no seed" in verdict.evidence


def test_one_seed_is_inconclusive_and_says_n_is_1():
    verdict = judge(CLAIM["E02.8"], ladder({1: 50.0}, {1: 100.0}))  # however clear it looks
    assert verdict.status == INCONCLUSIVE and verdict.n == 1
    assert "n = 1" in verdict.evidence


def test_the_interval_is_the_t_interval_of_the_mean_log_ratio():
    ratios = {1: 0.95, 2: 0.97, 3: 0.99}
    verdict = judge(
        CLAIM["E02.8"],
        ladder({s: 100 * r for s, r in ratios.items()}, dict.fromkeys(ratios, 100.0)),
    )
    logs = [math.log(r) for r in ratios.values()]
    mean = sum(logs) / 3
    std = math.sqrt(sum((x - mean) ** 2 for x in logs) / 2)
    half = t_quantile(0.95, 2) * std / math.sqrt(3)
    low, high = math.exp(mean - half), math.exp(mean + half)
    assert verdict.interval == f"[{low:.4g}, {high:.4g}]"
    assert verdict.status == (HOLDS if high < 1 else INCONCLUSIVE)


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({1: 0.97, 2: 0.98, 3: 0.99}, HOLDS),  # E17.4 "near perfect": at least 0.95
        ({1: 0.90, 2: 0.91, 3: 0.92}, FAILS),
        ({1: 0.90, 2: 0.99, 3: 0.96}, INCONCLUSIVE),
    ],
)
def test_a_single_measurement_is_decided_on_the_interval_of_its_mean(values, expected):
    records = {s: {"winograd/acc": v} for s, v in values.items()}
    results = Results(metrics={"winograd/closed-two-blocks": records})
    assert judge(CLAIM["E17.4"], results).status == expected


def _closed_average(right: dict[int, int], sentences: int = 240) -> Results:
    return Results(metrics={"winograd/closed-average": {
        s: {"winograd/acc": round(k / sentences, 4), "winograd/sentences": sentences}
        for s, k in right.items()}})  # fmt: skip


def test_below_chance_is_an_exact_binomial_test_on_the_pooled_held_out_counts():
    # 118 of 240 right: P(X <= 118 | 240, 1/2) = 0.4233, not significant.
    verdict = judge(CLAIM["E17.1"], _closed_average({1: 118}))
    assert verdict.status == INCONCLUSIVE and "0.423" in verdict.evidence
    # Pooled over three seeds, 354 of 720: P = 0.3409 (log-gamma sum), still inconclusive.
    pooled = judge(CLAIM["E17.1"], _closed_average({1: 118, 2: 118, 3: 118}))
    assert "354 of 720" in pooled.evidence and pooled.status == INCONCLUSIVE
    assert "= 0.341," in pooled.evidence and pooled.n == 3
    # 100 of 240: P(X <= 100) = 0.00583 < 0.05: significantly below chance.
    below = judge(CLAIM["E17.1"], _closed_average({1: 100}))
    assert below.status == HOLDS and below.interval == "p = 0.00583"
    # 140 of 240: significantly above chance, wholly on the other side.
    assert judge(CLAIM["E17.1"], _closed_average({1: 140})).status == FAILS


def test_post_norm_must_grow_with_depth_not_only_more_than_pre_norm():
    def grads(post: float, pre: float) -> Results:
        return Results(
            metrics={
                f"norm-{n}/eval": {
                    s: {"grad_norm/ratio_last_first": v * (1 + 0.01 * s)} for s in (1, 2, 3)
                }
                for n, v in (("post", post), ("pre", pre))
            }
        )

    assert judge(CLAIM["E11.4"], grads(post=3.0, pre=0.8)).status == HOLDS
    both_shrink = judge(CLAIM["E11.4"], grads(post=0.9, pre=0.5))  # the old rule held here
    assert both_shrink.status == FAILS


def test_all_of_is_inconclusive_unless_a_part_fails():
    a, b = Ref("x/eval", "a", "a"), Ref("x/eval", "b", "b")
    rule = all_of(in_range(a, lo=0.0), in_range(b, lo=0.0))
    clear, straddles, below = {1: 1.0, 2: 1.1}, {1: -1.0, 2: 1.0}, {1: -1.0, 2: -1.1}
    for b_values, expected in ((clear, HOLDS), (straddles, INCONCLUSIVE), (below, FAILS)):
        values = {a: clear, b: b_values}
        assert rule.decide(values).status == expected


def test_exact_computations_stay_point_decisions():
    probe = Results(
        metrics={
            "probes/e15": {
                None: {"e15/total/formula": 124_439_808, "e15/total/module": 124_439_808}
            }
        }
    )
    verdict = judge(CLAIM["E15.1"], probe)
    assert verdict.status == HOLDS and verdict.n is None and verdict.interval == ""
    off = Results(metrics={"probes/e03": {None: {"e03/last_row_max_abs_diff": 2e-5}}})
    assert judge(CLAIM["E03.1"], off).status == FAILS


def test_an_unseeded_trained_file_counts_as_one_seed():
    """A record of the old layout (no seed segment) is one run: n = 1, inconclusive."""
    verdict = judge(CLAIM["E02.8"], ladder({None: 50.0}, {None: 100.0}))
    assert verdict.status == INCONCLUSIVE and verdict.n == 1


def test_each_rung_is_judged_against_the_rung_above_it():
    rungs = {
        "E02.6": ("head-residual", "head-replace"),
        "E02.7": ("four-heads", "head-residual"),
        "E02.8": ("mlp", "four-heads"),
        "E02.9": ("layernorm", "mlp"),
    }
    for claim, (rung, above) in rungs.items():
        sources = [ref.source for ref in CLAIM[claim].rule.needs]
        assert sources == [f"ladder-{rung}/eval", f"ladder-{above}/eval"], claim


def test_every_trained_claims_test_names_its_test():
    for claim in CLAIMS:
        assert any(
            word in claim.rule.test
            for word in ("t-interval", "binomial", "exact", "point decision")
        ), claim.id


def test_a_ratio_rule_reports_its_threshold_side_in_words():
    rule = ratio_in(Ref("a/eval", "k", "A"), Ref("b/eval", "k", "B"), hi=0.9)
    assert rule.test.startswith("A / B at most 0.9 (paired by seed")
