"""The sweep section's answer against the catalogue's choice, on trials whose answer is known."""

import pytest
from report_fabricate import ROOT

from attnlab.config import catalogue_choice, load_params
from attnlab.report.sweep_answers import (
    RESCUE_WARMUP,
    Choice,
    Trial,
    answer,
    cost,
    read_trials,
)

DK_CHOICE = Choice("dk-128-scaled", {"d_head": 128, "scale_scores": True})
WARMUP_CHOICE = Choice("norm-pre", {"warmup_steps": 0, "norm": "pre", "n_head": 4})


def dk(number, value, d_head, divided, state="COMPLETE"):
    return Trial(number, state, value, {"d_head": d_head, "scale_scores": divided})


def warm(number, value, warmup, norm, state="COMPLETE", n_head=4):
    return Trial(number, state, value, {"warmup_steps": warmup, "norm": norm, "n_head": n_head})


def test_the_choice_ranks_among_the_completed_trials_and_pruned_or_failed_ones_do_not_count():
    trials = [
        dk(0, 50.0, 300, True),
        dk(1, 52.0, 128, True),  # the choice: 4 % above the best, near it
        dk(2, 51.0, 40, False),
        dk(3, 10.0, 900, False, state="PRUNED"),  # a curve point, lower than every result
        dk(4, None, 16, True, state="FAIL"),
        dk(5, 60.0, 1000, False),
    ]
    found = answer(trials, DK_CHOICE)
    assert found.numbers["completed"] == 4
    assert found.numbers["best/trial"] == 0 and found.numbers["best/val_ppl"] == 50.0
    assert found.numbers["choice/val_ppl"] == 52.0 and found.numbers["choice/rank"] == 3
    assert found.numbers["divided/best"] == 50.0 and found.numbers["undivided/best"] == 51.0
    assert found.numbers["choice/near_best"] is True
    text = " ".join(found.sentences)
    assert "rank 3 of 4 completed trials" in text and "trial 1, which has its values" in text
    assert "Best with the division: trial 0" in text and "best without: trial 2" in text
    assert "is near the best" in text


def test_the_choice_measured_as_its_variant_and_more_than_5_percent_off_is_not_near():
    trials = [dk(0, 50.0, 300, True), dk(1, 55.0, 40, False)]
    found = answer(trials, Choice("dk-128-scaled", DK_CHOICE.values, measured=53.0, seeds=3))
    assert found.numbers["choice/rank"] == 2 and found.numbers["choice/near_best"] is False
    assert "dk-128-scaled trained under the same protocol, mean of 3 seeds" in found.sentences[0]
    assert "is not near the best" in " ".join(found.sentences)


def test_a_choice_measured_nowhere_is_said_so_and_not_judged():
    found = answer([dk(0, 50.0, 300, True)], DK_CHOICE)
    assert found.numbers["choice/val_ppl"] is None and found.numbers["choice/near_best"] is None
    assert "was not measured under this study's protocol" in found.sentences[0]
    assert "no completed trial" in found.sentences[1]  # best without the division: none


def test_warmup_rescues_post_norm_within_the_margin_and_each_norm_gets_its_warmup():
    trials = [
        warm(0, 40.0, 0, "pre"),
        warm(1, 41.0, 100, "pre"),
        warm(2, 200.0, 0, "post"),
        warm(3, 41.5, 300, "post"),  # 3.75 % above pre-norm's best: rescued
        warm(4, 42.0, 250, "post"),  # within 5 % of post's best with less warmup
        warm(5, 30.0, 500, "post", state="PRUNED"),
    ]
    found = answer(trials, WARMUP_CHOICE)
    n = found.numbers
    assert n["pre/best"] == 40.0 and n["post/best"] == 41.5
    assert n["rescued"] is True and n["rescued/ratio"] == pytest.approx(41.5 / 40.0)
    assert n["pre/preferred_warmup"] == 0 and n["post/preferred_warmup"] == 300
    assert n["post/shortest_close_warmup"] == 250
    assert n["choice/rank"] == 1  # trial 0 has the choice's values
    assert "post-norm reaches pre-norm's best" in " ".join(found.sentences)


def test_post_norm_below_the_rescue_warmup_or_too_far_off_is_not_rescued():
    short = [warm(0, 40.0, 0, "pre"), warm(1, 40.5, RESCUE_WARMUP - 50, "post")]
    assert answer(short, WARMUP_CHOICE).numbers["rescued"] is None  # none at >= 200 steps
    far = [warm(0, 40.0, 0, "pre"), warm(1, 43.0, RESCUE_WARMUP, "post")]
    found = answer(far, WARMUP_CHOICE)
    assert found.numbers["rescued"] is False
    assert "does not reach pre-norm's best" in " ".join(found.sentences)


def test_a_study_with_no_completed_post_norm_trial():
    trials = [
        warm(0, 40.0, 0, "pre"),
        warm(1, 20.0, 300, "post", state="PRUNED"),
        warm(2, None, 400, "post", state="FAIL"),
    ]
    found = answer(trials, WARMUP_CHOICE)
    assert found.numbers["post/best"] is None and found.numbers["rescued"] is None
    assert found.numbers["post/preferred_warmup"] is None
    text = " ".join(found.sentences)
    assert "Best post-norm trial: none completed." in text
    assert "no completed post-norm with warmup >= 200 trial" in text


def test_no_completed_trial_is_no_answer():
    found = answer([dk(0, 9.0, 64, True, state="PRUNED")], DK_CHOICE)
    assert found.numbers == {"completed": 0}
    assert found.sentences == ("No trial completed (1 recorded): the study has no answer yet.",)


def test_trials_read_back_from_the_csv_rows_keep_their_types():
    rows = [
        {"number": "0", "state": "COMPLETE", "value": "80.5", "wandb_run_id": "ab12",
         "note": "", "d_head": "46", "scale_scores": "False", "norm": "post"},
        {"number": "1", "state": "FAIL", "value": "", "wandb_run_id": "", "note": "killed",
         "d_head": "26", "scale_scores": "True", "norm": ""},
    ]  # fmt: skip
    first, second = read_trials(rows)
    assert first.params == {"d_head": 46, "scale_scores": False, "norm": "post"}
    assert first.value == 80.5 and first.run_id == "ab12" and first.is_result
    assert second.value is None and not second.is_result and "norm" not in second.params


def test_the_cost_says_every_state_and_both_times():
    best = {
        "trials": {"target": 16, "COMPLETE": 11, "PRUNED": 5, "FAIL": 1, "RUNNING": 0},
        "cost": {"trial_s": 1234.5, "wall_s": 400.0},
        "protocol": {"workers": 4},
    }
    assert cost(best) == (
        "17 trials run of 16 asked for: 11 complete, 5 pruned, 1 failed; 1234 s of training "
        "summed over trials, 400 s wall from the first start to the last end by 4 worker(s)"
    )
    assert cost({"trials": best["trials"]}).endswith("; time not recorded")
    assert cost({}) == "not recorded"


def test_the_rules_read_the_catalogues_own_choices_from_params():
    params = load_params(ROOT / "params.yaml")
    studies = params.sweeps.studies
    dk_study, warmup_study = studies["dk"], studies["warmup"]
    assert catalogue_choice(dk_study, params.variant(dk_study.variant)) == {
        "d_head": 128,
        "scale_scores": True,
    }
    assert catalogue_choice(warmup_study, params.variant(warmup_study.variant)) == {
        "warmup_steps": 0,
        "norm": "pre",
        "n_head": 4,
    }
    # The rescue threshold is E11's warmup, the one claim E11.2 is made at.
    assert params.variant("norm-post-warmup").train.warmup_steps == RESCUE_WARMUP


def test_a_choice_below_every_trial_says_so():
    found = answer([dk(0, 50.0, 300, True)], Choice("dk-128-scaled", DK_CHOICE.values, 45.0, 2))
    assert found.numbers["choice/rank"] == 1 and found.numbers["choice/near_best"] is True
    assert "rank 1 of 1 completed trials: 10 % below the best trial, trial 0" in found.sentences[0]
