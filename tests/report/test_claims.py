"""Claim verdicts computed from hand-made measurements: holds, does not hold, not run.

Every trained measurement is given for two seeds (:func:`seeded`), the same number
under both unless a test says otherwise, so the interval is a point and the verdict is
the one its numbers imply; the interval logic itself is tested in test_verdicts.py.
"""

import re

import pytest
from report_fabricate import ROOT

from attnlab.catalogue import experiments
from attnlab.config import load_params
from attnlab.report import Results
from attnlab.verdicts import FAILS, HOLDS, NOT_RUN, catalogue_claims, judge
from attnlab.verdicts.winograd_maps import CROSSED, CROSSER

CLAIMS = catalogue_claims()

CLAIM = {claim.id: claim for claim in CLAIMS}
SEEDS = (1, 2)


def seeded(records: dict[str, dict]) -> Results:
    """``records`` by source, each the record of both seeds."""
    return Results(metrics={src: {s: dict(r) for s in SEEDS} for src, r in records.items()})


def _ladder(average: float, no_context: float) -> Results:
    return seeded(
        {
            "ladder-average/eval": {"val/ppl": average},
            "ladder-no-context/eval": {"val/ppl": no_context},
        }
    )


def test_averaging_about_four_times_worse_holds_at_four_and_fails_at_one_and_a_half():
    held = judge(CLAIM["E02.1"], _ladder(average=400.0, no_context=100.0))
    assert held.status == HOLDS and held.n == 2
    assert "ratio 4.000" in held.evidence and "ppl(average) = 400" in held.evidence
    failed = judge(CLAIM["E02.1"], _ladder(average=150.0, no_context=100.0))
    assert failed.status == FAILS and "ratio 1.500" in failed.evidence


def test_a_missing_measurement_is_not_run_and_names_the_file_and_key():
    verdict = judge(CLAIM["E02.1"], seeded({"ladder-no-context/eval": {"val/ppl": 9.0}}))
    assert verdict.status == NOT_RUN
    assert "ladder-average/eval.json: val/ppl" in verdict.evidence
    assert "ladder-no-context" not in verdict.evidence


def test_non_numbers_and_nulls_count_as_missing():
    nulls = seeded(
        {"ladder-average/eval": {"val/ppl": None}, "ladder-no-context/eval": {"val/ppl": "n/a"}}
    )
    assert judge(CLAIM["E02.1"], nulls).status == NOT_RUN


def test_undivided_head_at_d_1024_collapses_and_the_divided_one_stays_soft():
    undivided = {
        "init/scores/std/block_00/head_00": 10.0,
        "trained/scores/std/block_00/head_00": 2000.0,
        "trained/attn/entropy/block_00/head_00": 0.01,
        "init/attn/onehot_frac/block_00/head_00": 0.5,
        "trained/attn/onehot_frac/block_00/head_00": 0.97,
    }
    divided = {
        "trained/attn/onehot_frac/block_00/head_00": 0.02,
        "trained/attn/entropy/block_00/head_00": 2.5,
    }
    results = seeded({"dk-1024-unscaled/eval": undivided, "dk-1024-scaled/eval": divided})
    assert {
        c: judge(CLAIM[c], results).status for c in ("E09.1", "E09.2", "E09.3", "E09.4", "E09.5")
    } == dict.fromkeys(("E09.1", "E09.2", "E09.3", "E09.4", "E09.5"), HOLDS)
    for seed in SEEDS:  # only 5x its init
        results.metrics["dk-1024-unscaled/eval"][seed]["trained/scores/std/block_00/head_00"] = 50
    assert judge(CLAIM["E09.1"], results).status == FAILS


def test_a_mean_over_heads_and_blocks():
    results = Results(
        metrics={
            "x/eval": {
                1: {"a/block_00/head_00": 1.0, "a/block_00/head_01": 3.0, "b": 7.0},
                2: {"a/block_00/head_00": 5.0},
            }
        }
    )
    assert results.per_seed("x/eval", "a/*") == {1: 2.0, 2: 5.0}
    assert results.value("x/eval", "a/*") == 3.5
    assert results.value("x/eval", "c/*") is None


def test_alibi_must_improve_at_both_longer_lengths():
    def alibi(p64: float, p128: float, p256: float) -> Results:
        return seeded(
            {"positions-alibi/eval": {"val/ppl@64": p64, "val/ppl@128": p128, "val/ppl@256": p256}}
        )

    assert judge(CLAIM["E13.5"], alibi(100, 95, 90)).status == HOLDS
    verdict = judge(CLAIM["E13.5"], alibi(100, 95, 101))
    assert verdict.status == FAILS and "ratio 1.010" in verdict.evidence


def test_learned_positions_must_be_strictly_lowest_at_the_training_length():
    ppl = {"none": 120.0, "learned": 100.0, "sinusoidal": 101.0, "rope": 100.5, "alibi": 100.2}
    results = seeded({f"positions-{m}/eval": {"val/ppl@64": v} for m, v in ppl.items()})
    assert judge(CLAIM["E13.1"], results).status == HOLDS
    for seed in SEEDS:
        results.metrics["positions-rope/eval"][seed]["val/ppl@64"] = 99.0
    assert judge(CLAIM["E13.1"], results).status == FAILS


def test_every_value_of_a_swept_probe_must_be_in_range():
    results = Results(
        metrics={"probes/e05": {None: {"e05/var_over_d@4": 0.99, "e05/var_over_d@64": 1.2}}}
    )
    verdict = judge(CLAIM["E05.1"], results)
    assert verdict.status == FAILS and "64: 1.2" in verdict.evidence


def test_a_zero_in_a_denominator_is_not_run_rather_than_a_crash():
    verdict = judge(CLAIM["E02.1"], _ladder(average=4.0, no_context=0.0))
    assert verdict.status == NOT_RUN and "cannot be decided" in verdict.evidence


def test_the_winograd_maps_decide_the_mechanism_claims():
    from report_fabricate import maps

    results = Results(metrics={"winograd/closed-two-blocks": {1: {"maps": maps()}}})
    for claim in ("E17.5", "E17.6", "E17.7", "E17.8"):
        assert judge(CLAIM[claim], results).status == HOLDS, claim
    swapped = maps()
    swapped["wet"]["blocks"][1][1], swapped["wet"]["blocks"][1][6] = 0.3, 0.03
    record = {"variant": "closed-two-blocks", "adjectives": swapped}
    results = Results(documents={"winograd/maps": record})
    verdict = judge(CLAIM["E17.8"], results)
    assert verdict.status == FAILS and "wet 0.03 vs 0.30" in verdict.evidence


def test_the_registry_covers_the_catalogue_with_stated_thresholds():
    ids = [claim.id for claim in CLAIMS]
    assert len(ids) == len(set(ids))
    sections = set(experiments())
    trained = {"E02", "E08", "E09", "E11", "E13", "E16", "E17", "E18"}
    assert trained <= {claim.experiment for claim in CLAIMS}
    for claim in CLAIMS:
        assert claim.experiment in sections, claim.id
        assert re.search(r"at least|at most|between|above|below|equal to", claim.rule.test), (
            f"{claim.id}: its test states no threshold"
        )
        assert claim.reading and claim.rule.needs


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.id)
def test_every_claim_is_not_run_on_an_empty_run(claim):
    assert judge(claim, Results()).status == NOT_RUN


def test_the_map_rules_name_the_adjectives_of_params_by_role():
    adjectives = load_params(ROOT / "params.yaml").winograd.adjectives
    assert (CROSSER, CROSSED) == (tuple(adjectives.crosser), tuple(adjectives.crossed))
