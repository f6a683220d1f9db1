"""What a time limit lets start, from predicted costs; why stale stages are stale (pure)."""

import time
from types import SimpleNamespace

import pytest

from attnlab.errors import AttnlabError
from attnlab.fanout.forecast import Forecast
from attnlab.fanout.launcher import FanOut, FanOutResult
from attnlab.fanout.plan import StagePlan, prune
from attnlab.fanout.resources import Resources
from attnlab.fanout.stale import reasons, summary_lines
from attnlab.fanout.time_limit import TimeLimit, parse_duration

TRAIN, EVAL = "train@mlp-1", "evaluate@mlp-1"
TRAIN2, EVAL2 = "train@mlp-2", "evaluate@mlp-2"
SWEEP, CHECK = "sweep@dk", "sweep-check@dk-1"


def _plan() -> StagePlan:
    upstream = {EVAL: [TRAIN], EVAL2: [TRAIN2], CHECK: [SWEEP]}
    order = [TRAIN, TRAIN2, SWEEP, EVAL, EVAL2, CHECK, "report"]
    upstream["report"] = [EVAL, EVAL2, CHECK]
    plan = prune(upstream, order, order)
    return StagePlan(plan.order, plan.needs, considered=10)


def _limit(seconds: float, costs: dict[str, float]) -> TimeLimit:
    plan = _plan()
    forecast = Forecast({name: costs.get(name, 1.0) for name in plan.order}, plan.needs, 1, "")
    return TimeLimit(seconds, forecast, plan, trials={SWEEP: 10})


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90m", 5400), ("2h", 7200), ("1h30m", 5400), ("5400", 5400), ("45s", 45), ("1.5h", 5400)],
)
def test_durations_read_as_people_write_them(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "soon", "2d", "0", "-5m", "1h 30m"])
def test_a_bad_duration_is_an_error_naming_the_option(text):
    with pytest.raises(AttnlabError, match="--time-limit"):
        parse_duration(text)


def test_a_training_starts_only_when_its_evaluation_fits_too():
    # 60 s left: the training (40) fits alone, not with its evaluation (30).
    limit = _limit(60, {TRAIN: 40, EVAL: 30, TRAIN2: 20, EVAL2: 30})
    assert not limit.fits(TRAIN)
    assert limit.fits(TRAIN2) and limit.admit([TRAIN2]) == (TRAIN2,)
    # Once its training started, the evaluation belongs to a started unit: admitted, ...
    assert limit.cost(EVAL2) == 0 and limit.fits(EVAL2)
    # ... past the limit too, once its training has finished (the model is here only).
    limit.seconds = 0.0
    assert not limit.fits(EVAL2) and not limit.owed(EVAL2)
    limit.note_finished(TRAIN2)
    assert limit.owed(EVAL2) and limit.fits(EVAL2) and limit.admit([EVAL2]) == (EVAL2,)
    assert not limit.fits(EVAL) and not limit.fits(TRAIN)


def test_a_sweep_needs_one_trial_and_a_seed_group_what_its_stages_add_up_to():
    limit = _limit(100, {SWEEP: 5000, TRAIN: 30, EVAL: 10, TRAIN2: 30, EVAL2: 10})
    assert limit.cost(SWEEP) == 500 and not limit.fits(SWEEP)  # 10 trials: one costs 500
    limit = _limit(100, {SWEEP: 900, TRAIN: 30, EVAL: 10, TRAIN2: 30, EVAL2: 10})
    assert limit.fits(SWEEP)  # one trial: 90 s
    # One process trains both seeds one after the other: 80 s, then 40 more do not fit.
    assert limit.admit([TRAIN, TRAIN2]) == (TRAIN, TRAIN2)
    limit = _limit(70, {TRAIN: 30, EVAL: 10, TRAIN2: 30, EVAL2: 10})
    assert limit.admit([TRAIN, TRAIN2]) == (TRAIN,)


def test_a_group_resuming_its_training_starts_whole_or_not_at_all():
    # Its first seed alone fits (40 s with its evaluation), both (80 s) do not; alone it
    # would train from step 0 in another folder.
    limit = _limit(70, {TRAIN: 30, EVAL: 10, TRAIN2: 30, EVAL2: 10})
    assert limit.admit([TRAIN, TRAIN2], whole=True) == ()
    assert limit.cost(EVAL) == 10  # nothing recorded as started (its evaluation would cost 0)
    assert _limit(90, {TRAIN: 30, EVAL: 10, TRAIN2: 30, EVAL2: 10}).admit(
        [TRAIN, TRAIN2], whole=True
    ) == (TRAIN, TRAIN2)


def test_work_stopped_part_way_that_cannot_finish_in_time_leaves_its_place_to_what_can(
    tmp_path,
):
    # norm-pre's group was stopped part-way: it starts first, whole, when it fits ...
    (tmp_path / "checkpoints/norm-pre-seeds-1337-1338-0123456789abcdef").mkdir(parents=True)
    (tmp_path / "checkpoints/norm-pre-seeds-1337-1338-0123456789abcdef/last.ckpt").touch()
    group = ("train@norm-pre-1337", "train@norm-pre-1338")
    costs = {group[0]: 40.0, group[1]: 40.0, "train@ladder-mlp-1337": 30.0}
    plan = StagePlan(("train@ladder-mlp-1337", *group))

    def first_started(seconds: float) -> tuple[str, ...]:
        started: list[tuple[str, ...]] = []

        def start(stages, *args):
            started.append(stages)
            return SimpleNamespace(stages=stages, device=None)

        forecast = Forecast(costs, plan.needs, 1, "")
        fan_out = FanOut(
            tmp_path,
            plan,
            Resources(jobs=1, threads=1),
            {"ATTNLAB_RUN_ROOT": str(tmp_path)},
            start=start,
            limit=TimeLimit(seconds, forecast, plan),
        )
        fan_out._start_ready(FanOutResult())
        return started[0]

    assert first_started(100) == group
    # ... and gives its place to new work that fits, when it does not (each seed alone would).
    assert first_started(60) == ("train@ladder-mlp-1337",)


def test_the_limit_runs_out_with_the_clock_and_says_what_is_left():
    limit = _limit(0.2, {TRAIN: 30, EVAL: 30})
    assert not limit.reached and limit.left_s > 0
    time.sleep(0.3)
    assert limit.reached
    line = limit.left_line([TRAIN2, EVAL2, "report"])
    # 10 considered, 7 planned, 3 done: 6 current; left on one job, one after the other:
    # TRAIN + EVAL (60 s), the sweep and its check (1 s each): 62 s.
    assert line == (
        "6 of 10 stages current, 4 left (predicted 1:02 on this machine); "
        "the same command continues"
    )


def test_stale_stages_are_told_by_experiment_with_dvcs_reasons():
    code = [{"changed deps": {"src/attnlab/training": "modified", "data/models/x": "deleted"}}]
    params = [{"changed deps": {"params.yaml": {"variants.mlp": "modified"}}}]
    by_stage = {
        TRAIN: reasons(code),
        TRAIN2: reasons(code + [{"changed outs": {"data/models/y": "not in cache"}}]),
        SWEEP: reasons(params),
        EVAL: reasons([]),
        "cost": reasons([{"changed deps": {"pipeline/cost.py": "modified"}}, "changed command"]),
    }
    assert summary_lines(by_stage) == [
        "  train: 2 stages (code changed: src/attnlab/training)",
        "  sweep@dk: 1 stage (params changed: variants.mlp)",
        "  evaluate: 1 stage (after the stages it reads)",
        "  cost: 1 stage (changed command; code changed: pipeline/cost.py)",
    ]
