"""The sweep section's answer against the catalogue's choice, on trials whose answer is known."""

import pytest
from report_fabricate import PARAMS, ROOT

from attnlab.config import catalogue_choice, load_params
from attnlab.report.sweep_section import cost
from attnlab.verdicts.sweep_answers import answer
from attnlab.verdicts.sweep_choice import Choice
from attnlab.verdicts.sweep_thresholds import rescue_warmup
from attnlab.verdicts.sweep_trials import Trial, read_trials

RESCUE_WARMUP = rescue_warmup(PARAMS["variants"])  # E11's warmup, read from its rows
DK_CHOICE = Choice("dk-128-scaled", {"d_head": 128, "scale_scores": True})
WARMUP_CHOICE = Choice("norm-pre", {"warmup_steps": 0, "norm": "pre", "n_head": 4})


def dk(number, value, d_head, divided, state="COMPLETE", pruned_at=None):
    params = {"d_head": d_head, "scale_scores": divided}
    return Trial(number, state, value, params, pruned_at=pruned_at)


def warm(number, value, warmup, norm, state="COMPLETE", n_head=4, pruned_at=None):
    params = {"warmup_steps": warmup, "norm": norm, "n_head": n_head}
    return Trial(number, state, value, params, pruned_at=pruned_at)


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
    assert "The catalogue's choice (d_head = 128, scale_scores = yes) is near the best" in text


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
    found = answer(trials, WARMUP_CHOICE, rescue_warmup=RESCUE_WARMUP)
    n = found.numbers
    assert n["pre/best"] == 40.0 and n["post/best"] == 41.5
    assert n["rescued"] is True and n["rescued/ratio"] == pytest.approx(41.5 / 40.0)
    assert n["pre/preferred_warmup"] == 0 and n["post/preferred_warmup"] == 300
    assert n["post/shortest_close_warmup"] == 250
    assert n["choice/rank"] == 1  # trial 0 has the choice's values
    assert "post-norm reaches pre-norm's best" in " ".join(found.sentences)


def test_post_norm_below_the_rescue_warmup_or_too_far_off_is_not_rescued():
    short = [warm(0, 40.0, 0, "pre"), warm(1, 40.5, RESCUE_WARMUP - 50, "post")]
    found = answer(short, WARMUP_CHOICE, rescue_warmup=RESCUE_WARMUP)
    assert found.numbers["rescued"] is None  # none at >= 200 steps
    far = [warm(0, 40.0, 0, "pre"), warm(1, 43.0, RESCUE_WARMUP, "post")]
    found = answer(far, WARMUP_CHOICE, rescue_warmup=RESCUE_WARMUP)
    assert found.numbers["rescued"] is False
    assert "does not reach pre-norm's best" in " ".join(found.sentences)


def test_a_study_with_no_completed_post_norm_trial():
    trials = [
        warm(0, 40.0, 0, "pre"),
        warm(1, 20.0, 300, "post", state="PRUNED"),
        warm(2, None, 400, "post", state="FAIL"),
    ]
    found = answer(trials, WARMUP_CHOICE, rescue_warmup=RESCUE_WARMUP)
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
        {"number": "2", "state": "PRUNED", "value": "", "pruned_at": "500", "note": "pruned",
         "d_head": "32", "scale_scores": "True", "norm": "pre"},
    ]  # fmt: skip
    first, second, third = read_trials(rows)
    assert first.params == {"d_head": 46, "scale_scores": False, "norm": "post"}
    assert first.value == 80.5 and first.run_id == "ab12" and first.is_result
    assert first.pruned_at is None and third.pruned_at == 500  # not a searched parameter
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
    # The rescue threshold is E11's warmup, the one claim E11.2 is made at, read from params.
    assert params.variant("norm-post-warmup").train.warmup_steps == RESCUE_WARMUP


def test_a_choice_below_every_trial_says_so():
    found = answer([dk(0, 50.0, 300, True)], Choice("dk-128-scaled", DK_CHOICE.values, 45.0, 2))
    assert found.numbers["choice/rank"] == 1 and found.numbers["choice/near_best"] is True
    # The variant's own value is not a trial: it ranks among the trials and itself.
    assert (
        "rank 1 of 2 with the 1 completed trial: 10 % below the best trial, trial 0"
        in found.sentences[0]
    )


DK_32 = {"d_head": 32, "scale_scores": True}  # params sweeps.studies.dk.references[0]
POST_200 = {"warmup_steps": 200, "norm": "post", "n_head": 4}  # ...warmup.references[0]


def test_the_dk_reference_gets_its_rank_its_distance_and_whether_it_is_near_the_best():
    trials = [dk(0, 52.0, 32, True), dk(1, 50.0, 300, True), dk(2, 51.0, 40, False)]
    found = answer(trials, DK_CHOICE, [DK_32])
    n = found.numbers
    assert n["reference[0]/trial"] == 0 and n["reference[0]/state"] == "COMPLETE"
    assert n["reference[0]/rank"] == 3 and n["reference[0]/near_best"] is True
    assert n["reference[0]/over_best"] == pytest.approx(0.04)
    assert found.sentences[0] == (
        "Reference 0 (d_head = 32, scale_scores = yes): trial 0, val/ppl 52, rank 3 of 3 "
        "completed trials, 4 % above the best, trial 1 (d_head = 300, scale_scores = yes; "
        "val/ppl 50): near the best."
    )
    far = answer([dk(0, 53.0, 32, True), dk(1, 50.0, 300, True)], DK_CHOICE, [DK_32])
    assert far.numbers["reference[0]/near_best"] is False
    assert far.sentences[0].endswith(
        "6 % above the best, trial 1 (d_head = 300, scale_scores = yes; val/ppl 50): "
        "not near the best."
    )
    best = answer([dk(0, 49.0, 32, True), dk(1, 50.0, 300, True)], DK_CHOICE, [DK_32])
    assert "rank 1 of 2 completed trials, the best: near the best." in best.sentences[0]


def test_a_pruned_reference_is_not_near_the_best_and_a_missing_one_is_not_run():
    trials = [dk(0, 9.0, 32, True, state="PRUNED", pruned_at=500), dk(1, 50.0, 300, True)]
    found = answer(trials, DK_CHOICE, [DK_32, {"d_head": 64, "scale_scores": False}])
    n = found.numbers
    assert n["reference[0]/state"] == "PRUNED" and n["reference[0]/pruned_at"] == 500
    assert n["reference[0]/near_best"] is False and "reference[0]/rank" not in n
    assert found.sentences[0] == (
        "Reference 0 (d_head = 32, scale_scores = yes): trial 0 was pruned at step 500 (its "
        "val/ppl curve was worse there than the median of the trials before it), so not near "
        "the best."
    )
    assert n["reference[1]/state"] == "not run" and n["reference[1]/near_best"] is None
    assert found.sentences[1] == (
        "Reference 1 (d_head = 64, scale_scores = no): not run (no trial of the study has its "
        "values), so not judged."
    )


def test_a_failed_reference_is_judged_by_its_retry_and_an_unfinished_one_not_at_all():
    retried = [dk(0, None, 32, True, state="FAIL"), dk(1, 50.0, 300, True), dk(2, 51.0, 32, True)]
    found = answer(retried, DK_CHOICE, [DK_32])
    assert found.numbers["reference[0]/trial"] == 2 and found.numbers["reference[0]/rank"] == 2
    failed = answer(
        [dk(0, None, 32, True, state="FAIL"), dk(1, 50.0, 300, True)], DK_CHOICE, [DK_32]
    )
    assert failed.numbers["reference[0]/near_best"] is None
    assert "trial 0 did not finish (FAIL), so not judged." in failed.sentences[0]


def test_the_warmup_reference_is_rescued_within_5_percent_of_pre_norms_best():
    trials = [warm(0, 41.5, 200, "post"), warm(1, 40.0, 0, "pre"), warm(2, 42.0, 100, "pre")]
    found = answer(trials, WARMUP_CHOICE, [POST_200], rescue_warmup=RESCUE_WARMUP)
    n = found.numbers
    assert n["reference[0]/rescued"] is True
    assert n["reference[0]/rescued/ratio"] == pytest.approx(41.5 / 40.0)
    assert (
        "Do 200 warmup steps rescue post-norm? Reference 0 (warmup_steps = 200, norm = post, "
        "n_head = 4): trial 0, val/ppl 41.5, is 1.038 times pre-norm's best, trial 1 "
        "(warmup_steps = 0, norm = pre, n_head = 4; val/ppl 40): rescued."
    ) in found.sentences
    assert n["pre/preferred_warmup"] == 0  # and which warmup the study prefers, as before
    far = answer(
        [warm(0, 42.5, 200, "post"), warm(1, 40.0, 0, "pre")],
        WARMUP_CHOICE,
        [POST_200],
        rescue_warmup=RESCUE_WARMUP,
    )
    assert far.numbers["reference[0]/rescued"] is False
    verdict = (
        "is 1.062 times pre-norm's best, trial 1 (warmup_steps = 0, norm = pre, n_head = 4; "
        "val/ppl 40): not rescued."
    )
    assert any(s.endswith(verdict) for s in far.sentences)


def test_a_pruned_warmup_reference_is_not_rescued_and_a_missing_one_not_judged():
    pruned = [warm(0, 90.0, 200, "post", state="PRUNED", pruned_at=600), warm(1, 40.0, 0, "pre")]
    found = answer(pruned, WARMUP_CHOICE, [POST_200], rescue_warmup=RESCUE_WARMUP)
    assert found.numbers["reference[0]/rescued"] is False
    assert (
        "Do 200 warmup steps rescue post-norm? Reference 0 (warmup_steps = 200, norm = post, "
        "n_head = 4): trial 0 was pruned at step 600 (its val/ppl curve was worse there than "
        "the median of the trials before it), so not rescued."
    ) in found.sentences
    missing = answer(
        [warm(0, 40.0, 0, "pre"), warm(1, 41.0, 300, "post")],
        WARMUP_CHOICE,
        [POST_200],
        rescue_warmup=RESCUE_WARMUP,
    )
    assert missing.numbers["reference[0]/rescued"] is None
    assert missing.numbers["rescued"] is True  # the sampled post-norm trial at 300 steps
    assert (
        "Do 200 warmup steps rescue post-norm? Reference 0 (warmup_steps = 200, norm = post, "
        "n_head = 4): not run (no trial of the study has its values), so not judged."
    ) in missing.sentences
    no_pre = answer(
        [warm(0, 41.0, 200, "post")], WARMUP_CHOICE, [POST_200], rescue_warmup=RESCUE_WARMUP
    )
    assert no_pre.numbers["reference[0]/rescued"] is None
    assert any("no completed pre-norm trial to compare it with" in s for s in no_pre.sentences)


def test_the_real_references_are_the_storys_points():
    studies = load_params(ROOT / "params.yaml").sweeps.studies
    assert studies["dk"].references == [DK_32]
    assert studies["warmup"].references == [POST_200]


def test_a_reference_exactly_at_the_margin_is_near_the_best_as_the_choice_is():
    # 52.5 is 5 % above 50: within E11.2's "matches" for a reference as for the choice
    # (judged on the difference, 52.5 / 50 - 1 is 0.0500000000000000044 in floats).
    choice = Choice("dk-128-scaled", DK_CHOICE.values, measured=52.5, seeds=1)
    found = answer([dk(0, 52.5, 32, True), dk(1, 50.0, 300, True)], choice, [DK_32])
    assert found.numbers["reference[0]/near_best"] is True
    assert found.numbers["choice/near_best"] is True


def test_a_project_without_e11_s_rows_gets_its_warmup_study_answered_without_the_rescue():
    trials = [warm(0, 40.0, 0, "pre"), warm(1, 41.5, 300, "post")]
    found = answer(trials, WARMUP_CHOICE, rescue_warmup=None)
    assert "rescued" not in found.numbers and found.numbers["choice/rank"] == 1
    assert any("'Rescued' is not judged" in rule for rule in found.rules)
