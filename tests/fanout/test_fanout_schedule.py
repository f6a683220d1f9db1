"""The fan-out's pure scheduling: which stages wait for which, and who gets which device."""

import pytest

from attnlab.errors import AttnlabError
from attnlab.fanout import plan_resources, prune, visible_devices
from attnlab.fanout.children import lost_a_lock, outcome

# A diamond under a chain: data -> {train@a, train@b} -> report, and probes on its own.
UPSTREAM = {
    "data": [],
    "train@a": ["data"],
    "train@b": ["data"],
    "probes": [],
    "report": ["train@a", "train@b", "probes"],
}
ORDER = ["data", "probes", "train@a", "train@b", "report"]


def test_a_changed_stage_plans_everything_downstream_of_it_and_nothing_else():
    plan = prune(UPSTREAM, ["train@a"], ORDER)
    assert plan.order == ("train@a", "report")
    assert plan.needs["report"] == {"train@a"}  # train@b and probes are up to date


def test_nothing_changed_plans_nothing():
    assert prune(UPSTREAM, [], ORDER).order == ()


def test_stages_start_only_after_their_planned_upstream_finishes():
    plan = prune(UPSTREAM, ["data", "probes"], ORDER)
    assert plan.ready(done=[], started=[]) == ["data", "probes"]
    assert plan.ready(done=["data"], started=["data", "probes"]) == ["train@a", "train@b"]
    started = ["data", "probes", "train@a", "train@b"]
    assert plan.ready(done=["data", "probes", "train@a"], started=started) == []
    done = ["data", "probes", "train@a", "train@b"]
    assert plan.ready(done=done, started=started) == ["report"]


def test_a_failed_stage_blocks_its_downstream_only():
    plan = prune(UPSTREAM, ["data", "probes"], ORDER)
    assert plan.blocked_by(["train@a"]) == {"report"}
    assert plan.blocked_by(["data"]) == {"train@a", "train@b", "report"}
    assert plan.blocked_by(["probes"]) == {"report"}


def test_cpu_jobs_default_to_the_cores_and_threads_never_oversubscribe():
    assert plan_resources(2, []) == plan_resources(2, [], jobs=2)
    assert plan_resources(2, []).jobs == 2 and plan_resources(2, []).threads == 1
    one = plan_resources(16, [], jobs=1)
    assert one.threads == 16
    for cores in (1, 2, 7, 16):
        for jobs in range(1, cores + 1):
            spread = plan_resources(cores, [], jobs=jobs)
            assert spread.jobs * spread.threads <= cores


def test_gpus_take_several_stages_each_and_the_least_busy_device_is_picked():
    resources = plan_resources(16, ["0", "1"], per_device=3)
    assert resources.jobs == 6 and resources.threads == 2
    assert resources.pick_device({}) == "0"
    assert resources.pick_device({"0": 1}) == "1"
    assert resources.pick_device({"0": 2, "1": 1}) == "1"
    with pytest.raises(AttnlabError, match="already runs 3"):
        resources.pick_device({"0": 3, "1": 3})
    assert plan_resources(16, ["0", "1"], jobs=100, per_device=3).jobs == 6


def test_a_child_sees_its_threads_and_only_its_device():
    resources = plan_resources(8, ["3", "5"], per_device=2)
    env = resources.child_environment({"PATH": "/bin", "OMP_NUM_THREADS": "8"}, "5")
    assert env == {
        "PATH": "/bin",
        "OMP_NUM_THREADS": "2",
        "MKL_NUM_THREADS": "2",
        "CUDA_VISIBLE_DEVICES": "5",
    }
    cpu = plan_resources(2, []).child_environment({}, plan_resources(2, []).pick_device({}))
    assert "CUDA_VISIBLE_DEVICES" not in cpu and cpu["OMP_NUM_THREADS"] == "1"


def test_visible_devices_honour_cuda_visible_devices_over_the_driver():
    assert visible_devices({}, ["0", "1", "2"]) == ["0", "1", "2"]
    assert visible_devices({"CUDA_VISIBLE_DEVICES": "2, 0"}, ["0", "1", "2"]) == ["2", "0"]
    assert visible_devices({"CUDA_VISIBLE_DEVICES": ""}, ["0"]) == []
    assert visible_devices({}, None) == []


def test_bad_job_counts_are_refused():
    with pytest.raises(AttnlabError, match="--jobs"):
        plan_resources(2, [], jobs=0)
    with pytest.raises(AttnlabError, match="--per-device"):
        plan_resources(2, ["0"], per_device=0)


def test_dvc_lock_failures_are_told_apart_from_stage_failures():
    assert lost_a_lock("ERROR: Unable to acquire lock. Most likely another DVC process")
    assert lost_a_lock("ERROR: 'data/models/a' is busy, it is being blocked by:\n  (PID 1)")
    assert not lost_a_lock("error: params.yaml is invalid")
    assert outcome("Running stage 'train@a':\n> python ...", "train@a") == "ran"
    assert outcome("Stage 'train@a' didn't change, skipping", "train@a") == "up to date"
    # A seed group's log speaks of several stages: each is read apart.
    group = "Stage 'train@a-1' didn't change, skipping\nRunning stage 'train@a-2':"
    assert outcome(group, "train@a-1") == "up to date" and outcome(group, "train@a-2") == "ran"
