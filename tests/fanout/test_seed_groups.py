"""Which ready stages start together (attnlab.fanout.seed_groups), and a group's command."""

from types import SimpleNamespace

import pytest

from attnlab.errors import AttnlabError
from attnlab.fanout.group_stage import _commands, group_command, reproduce_group
from attnlab.fanout.seed_groups import launch_units, resumes_whole, runs_as_group

P0 = [f"train@ladder-mlp-{seed}" for seed in (1337, 1338, 1339)]


def test_the_ready_train_stages_of_one_variant_start_as_one_group():
    ready = ["tokenize", *P0, "train@norm-pre-1337", "evaluate@ladder-mlp-1337"]
    assert launch_units(ready, free=3) == [
        ("tokenize",),
        tuple(P0),
        ("train@norm-pre-1337",),
    ]


def test_the_other_seeded_stages_group_by_family_and_variant():
    ready = [
        "evaluate@ladder-mlp-1337",
        "winograd-score@closed-1337",
        "evaluate@ladder-mlp-1338",
        "evaluate@norm-pre-1337",
        "winograd-score@closed-1338",
        "charts",
    ]
    assert launch_units(ready, free=4) == [
        ("evaluate@ladder-mlp-1337", "evaluate@ladder-mlp-1338"),
        ("winograd-score@closed-1337", "winograd-score@closed-1338"),
        ("evaluate@norm-pre-1337",),
        ("charts",),
    ]


def test_a_group_of_two_families_or_variants_is_refused_before_any_work(tmp_path):
    # No DVC project here: the check comes first.
    for names in (
        ["train@ladder-mlp-1337", "evaluate@ladder-mlp-1338"],
        ["evaluate@ladder-mlp-1337", "evaluate@norm-pre-1337"],
        ["evaluate@ladder-mlp-1337", "charts"],
    ):
        with pytest.raises(AttnlabError, match="not the stages of one family and variant"):
            reproduce_group(tmp_path, names)


def test_seeded_stages_run_through_the_group_runner_a_lone_seed_too():
    assert runs_as_group(("train@ladder-mlp-1337", "train@ladder-mlp-1338"))
    assert runs_as_group(("evaluate@ladder-mlp-1337",))
    assert not runs_as_group(("charts",))
    assert not runs_as_group(("sweep@dk",))
    assert not runs_as_group(("evaluate@ladder-mlp-1337",), group=False)


def test_no_grouping_starts_every_stage_alone():
    assert launch_units(P0, free=8, group=False) == [(name,) for name in P0]


def test_a_group_is_split_rather_than_leave_a_place_idle():
    # Three seeds on two cores: a group of two beside a single run, not one group and
    # an idle core (one thread per process out-trains two threads in one).
    assert launch_units(P0, free=2) == [tuple(P0[:2]), (P0[2],)]
    assert launch_units(P0, free=5) == [(name,) for name in P0]
    assert launch_units(P0, free=1) == [tuple(P0)]
    assert launch_units(P0, free=0) == []


def test_a_group_s_seeds_start_in_seed_order_however_the_plan_lists_them():
    # The order names the group's resume folder: another order would train from step 0.
    assert launch_units(P0[::-1], free=1) == [tuple(P0)]
    assert launch_units(P0[::-1], free=2) == [tuple(P0[:2]), (P0[2],)]


def test_a_group_with_a_resume_point_starts_as_that_group_in_its_order_and_whole():
    resumable = [("ladder-mlp", (1339, 1337)), ("norm-pre", (1337, 1338))]
    mlp_1339_1337, mlp_1338 = (P0[2], P0[0]), (P0[1],)
    # Not regrouped (three seeds in one fit), not split to fill a free place.
    assert launch_units(P0, free=1, resumable=resumable) == [mlp_1339_1337]
    assert launch_units(P0, free=2, resumable=resumable) == [mlp_1339_1337, mlp_1338]
    assert launch_units(P0, free=4, resumable=resumable) == [mlp_1339_1337, mlp_1338]
    assert resumes_whole(mlp_1339_1337, resumable)
    assert not resumes_whole(tuple(P0[:2]), resumable) and not resumes_whole(mlp_1338, resumable)
    assert not resumes_whole(("sweep@dk",), resumable) and not resumes_whole(("charts",), resumable)
    # Only train stages resume; a group not all ready here is not formed.
    evaluations = [name.replace("train@", "evaluate@") for name in P0]
    assert launch_units(evaluations, free=1, resumable=resumable) == [tuple(evaluations)]
    assert launch_units(P0[:2], free=1, resumable=resumable) == [tuple(P0[:2])]
    # A lone seed that began alone resumes alone, beside a group of the others.
    assert launch_units(P0, free=2, resumable=[("ladder-mlp", (1338,))]) == [
        mlp_1338,
        (P0[0], P0[2]),
    ]
    # The same seeds kept twice (in two orders): the first listed, the newest, wins.
    twice = [("ladder-mlp", (1338, 1337)), ("ladder-mlp", (1337, 1338))]
    assert launch_units(P0, free=2, resumable=twice) == [(P0[1], P0[0]), (P0[2],)]


def test_work_stopped_part_way_starts_before_new_work_whatever_the_plan_order():
    # The plan lists ladder-mlp first; norm-pre's group was stopped by a time limit.
    norm_pre = ["train@norm-pre-1337", "train@norm-pre-1338"]
    resumable = [("norm-pre", (1337, 1338))]
    assert launch_units(P0 + norm_pre, free=1, resumable=resumable) == [tuple(norm_pre)]
    assert launch_units(P0 + norm_pre, free=2, resumable=resumable) == [
        tuple(norm_pre),
        tuple(P0),
    ]
    assert launch_units(P0 + norm_pre, free=1) == [tuple(P0)]  # nothing stopped: plan order


def test_variant_names_with_dashes_and_digits_group_by_their_whole_name():
    ready = ["train@dk-128-scaled-1337", "train@dk-128-unscaled-1337", "train@dk-128-scaled-1338"]
    assert launch_units(ready, free=2) == [
        ("train@dk-128-scaled-1337", "train@dk-128-scaled-1338"),
        ("train@dk-128-unscaled-1337",),
    ]


def test_the_train_stages_of_extra_seeds_train_as_one_fit_too():
    stages = [
        SimpleNamespace(
            addressing=f"train-extra@ladder-mlp-{s}",
            cmd=f"python pipeline/train.py --variant ladder-mlp --seed {s}",
        )
        for s in (1340, 1341)
    ]
    assert _commands(stages) == [
        ("python pipeline/train.py --variant ladder-mlp --seed 1340 --seed 1341", stages)
    ]
    evaluations = [
        SimpleNamespace(addressing=f"evaluate-extra@ladder-mlp-{s}", cmd=f"evaluate {s}")
        for s in (1340, 1341)
    ]
    assert _commands(evaluations) == [(e.cmd, [e]) for e in evaluations]  # one by one


def test_the_group_command_is_the_first_stage_s_with_every_seed():
    commands = [f"python pipeline/train.py --variant ladder-mlp --seed {s}" for s in (7, 8, 9)]
    assert group_command(commands, [7, 8, 9]) == (
        "python pipeline/train.py --variant ladder-mlp --seed 7 --seed 8 --seed 9"
    )
    with pytest.raises(AttnlabError, match="differ beyond the seed"):
        group_command([commands[0], commands[1].replace("mlp", "average")], [7, 8])
    with pytest.raises(AttnlabError, match="no --seed 7"):
        group_command(["python pipeline/evaluate.py"], [7])
