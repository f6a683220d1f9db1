"""What each SLURM job asks for, and how the queue's answers are read (no scheduler needed).

tests/slurm runs the same code against a real cluster; here the arithmetic of the request
and the parsing of ``scontrol`` are checked case by case.
"""

import copy
from pathlib import Path

import pytest

from attnlab.config import parse_params
from attnlab.config.files import read_params_mapping
from attnlab.config.slurm import SlurmParams
from attnlab.errors import ParamsError
from attnlab.fanout.forecast import Forecast
from attnlab.fanout.slurm import SlurmExecutor, parse_jobs, time_limit_minutes

PARAMS = Path(__file__).resolve().parents[2] / "params.yaml"
TRAIN = ("train@ladder-mlp-1337", "train@ladder-mlp-1338")
# Two lines of `scontrol show job --oneliner` (22.05), shortened to the fields it reads and
# a few around them.
SCONTROL = (
    "JobId=7 JobName=attnlab:train@ladder-mlp-1337+1 UserId=root(0) JobState=PENDING "
    "Reason=BeginTime Dependency=(null) Requeue=1 Restarts=1 BatchFlag=1 ExitCode=0:0 "
    "RunTime=00:00:00\n"
    "JobId=8 JobName=attnlab:tokenize UserId=root(0) JobState=CANCELLED Reason=None "
    "Requeue=1 Restarts=0 BatchFlag=1 ExitCode=0:15 RunTime=00:00:03\n"
)


def test_the_time_limit_is_the_forecast_with_margin_and_start_up_within_the_bounds():
    settings = SlurmParams(time_margin=2.0, min_time_minutes=10)
    assert time_limit_minutes(600, settings) == 25  # 600 s x 2 + 300 s of start-up
    assert time_limit_minutes(0, settings) == 10  # the floor
    assert time_limit_minutes(601, settings) == 26  # whole minutes, rounded up
    capped = SlurmParams(max_time_minutes=15)
    assert time_limit_minutes(3600, capped) == 15  # a partition's limit: the job requeues


def test_a_job_asks_for_its_cpus_memory_time_and_a_gpu_only_when_it_trains(tmp_path):
    settings = SlurmParams(
        partition="gpu",
        account="lab",
        cpus_per_job=4,
        mem_per_job="16G",
        gres="gpu:1",
        extra_options=["--qos=short"],
    )
    predicted = Forecast({TRAIN[0]: 300.0, TRAIN[1]: 300.0, "tokenize": 10.0}, {}, 1, "test")
    executor = SlurmExecutor(settings, predicted)
    trains = executor.sbatch_options(TRAIN, tmp_path / "a.log", tmp_path)
    for option in (
        "--job-name=attnlab:train@ladder-mlp-1337+1",
        f"--output={tmp_path / 'a.log'}",
        "--open-mode=append",
        "--cpus-per-task=4",
        "--mem=16G",
        "--time=25",  # the group's 600 s x 2 + 300 s
        "--signal=B:USR1@120",
        "--requeue",
        "--partition=gpu",
        "--account=lab",
        "--gres=gpu:1",
        "--qos=short",
    ):
        assert option in trains
    data = executor.sbatch_options(("tokenize",), tmp_path / "b.log", tmp_path)
    assert "--gres=gpu:1" not in data and "--time=10" in data


def test_scontrol_lines_give_each_jobs_state_and_exit_status():
    jobs = parse_jobs(SCONTROL)
    assert jobs["7"].state == "PENDING" and jobs["7"].reason == "BeginTime"
    assert jobs["7"].restarts == 1 and jobs["7"].exit_code == 0
    assert jobs["8"].state == "CANCELLED" and jobs["8"].exit_code == 128 + 15  # by SIGTERM


def test_a_bad_slurm_knob_is_refused_naming_it():
    params = copy.deepcopy(read_params_mapping(PARAMS))
    params["runtime"]["slurm"]["mem_per_job"] = "lots"
    with pytest.raises(ParamsError) as caught:
        parse_params(params)
    assert "runtime.slurm.mem_per_job" in str(caught.value)
