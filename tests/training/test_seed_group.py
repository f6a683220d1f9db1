"""A seed group trains each member exactly as its single run (attnlab.training.fit.train_group).

The independent reference is the single run itself: the same variant, seed by seed, trained
alone through :func:`train_variant`. A member must start from its single run's weights
(bit for bit), draw its batches (every step's indices) and follow its loss curve.
"""

import signal

import pytest
import torch
from train_helpers import SEED, shrunk_params

from attnlab.config import parse_params
from attnlab.data.batches import draw_group_windows, draw_windows
from attnlab.runs.along_weights import step_file
from attnlab.training import TrainJob
from attnlab.training.fit import train_group, train_variant
from attnlab.training.group import FitOptions, Member

SEEDS = (SEED, SEED + 1, SEED + 2)
STEPS = 50


def _jobs(variant: str, steps: int = STEPS) -> list[TrainJob]:
    params = parse_params(shrunk_params(steps))
    return [TrainJob.from_params(params, variant, seed) for seed in SEEDS]


def _options(train_tokens, run_root, wandb, **more):
    return FitOptions(
        train_tokens, run_root, wandb, live_progress=False, project_dir=run_root.parent, **more
    )


def test_every_step_of_a_group_stacks_each_member_s_own_batch(train_tokens):
    from attnlab.data.tokens import read_tokens

    tokens = read_tokens(train_tokens)
    for step in (0, 1, 17, 2999):
        group = draw_group_windows(tokens, 32, 8, SEEDS, step)
        for member, seed in enumerate(SEEDS):
            alone = draw_windows(tokens, 32, 8, seed, step)
            assert torch.equal(group.x[member], alone.x) and torch.equal(group.y[member], alone.y)
    other = draw_windows(tokens, 32, 8, SEEDS[1], 0)
    assert not torch.equal(draw_windows(tokens, 32, 8, SEEDS[0], 0).x, other.x)


# 50 steps each: P0's recipe trains 3000 at the story's budget, E11's 1000.
@pytest.mark.parametrize(
    ("variant", "story_steps"), [("ladder-layernorm", STEPS), ("norm-pre-dropout10", 3 * STEPS)]
)
def test_a_group_member_trains_as_its_single_run(tmp_path, train_tokens, variant, story_steps):
    jobs = _jobs(variant, story_steps)
    assert jobs[0].steps == STEPS
    kept = (0, STEPS)
    singles = [
        train_variant(
            job,
            _options(train_tokens, tmp_path / f"alone-{job.seed}", tmp_path / "wandb",
                     keep_checkpoint=True),
            along=kept,
        )
        for job in jobs
    ]  # fmt: skip
    group = train_group(
        [Member(job, along=kept) for job in jobs],
        _options(train_tokens, tmp_path / "group", tmp_path / "wandb", keep_checkpoint=True),
    )  # fmt: skip
    for alone, member in zip(singles, group, strict=True):
        assert alone.along is not None and member.along is not None
        # The same initial weights, bit for bit.
        first = step_file(0)
        assert (member.along / first).read_bytes() == (alone.along / first).read_bytes()
        # The loss of every step: the same kernels on the same batches, so the same floats
        # (bit for bit, not only to round-off: the members run one after the other).
        steps = [step for step, _ in alone.curve]
        assert steps == list(range(STEPS)) == [step for step, _ in member.curve]
        assert [loss for _, loss in member.curve] == [loss for _, loss in alone.curve]
        # And so the same trained weights, dropout's masks included.
        trained, reference = member.model.state_dict(), alone.model.state_dict()
        assert all(torch.equal(trained[name], reference[name]) for name in reference)
        assert member.metrics["seed"] == alone.metrics["seed"]
        assert member.metrics["group_seeds"] == list(SEEDS)
    # The members really are different runs.
    assert group[0].curve[5][1] != group[1].curve[5][1]


def test_a_group_refuses_members_of_two_variants(tmp_path, train_tokens):
    one, two = _jobs("ladder-layernorm")[0], _jobs("ladder-mlp")[1]
    with pytest.raises(ValueError, match="one variant"):
        train_group([Member(one), Member(two)], FitOptions(train_tokens, tmp_path, tmp_path))
    with pytest.raises(ValueError, match="distinct seeds"):
        train_group([Member(one), Member(one)], FitOptions(train_tokens, tmp_path, tmp_path))


@pytest.mark.slow
def test_a_killed_group_resumes_bit_for_bit_as_the_uninterrupted_group(stage_project):
    from train_helpers import run_folder, stop_after_first_checkpoint

    from attnlab.training import load_checkpoint_file

    # Dropout on: each member's own random stream must resume too.
    params = shrunk_params(
        steps=120, model={"dropout": 0.1}, runtime={"checkpoint": {"every_n_train_steps": 20}}
    )
    others = [option for seed in SEEDS[1:] for option in ("--seed", str(seed))]
    whole = stage_project("whole", params)
    done = whole.run("ladder-layernorm", *others)
    assert done.returncode == 0, done.stdout + done.stderr
    killed = stage_project("killed", params)
    stop_after_first_checkpoint(killed, "ladder-layernorm", signal.SIGKILL, *others)
    (checkpoint,) = killed.checkpoints()
    assert "-seeds-" in checkpoint.parent.name  # one checkpoint for the whole group
    at = load_checkpoint_file(checkpoint)["global_step"]
    assert 0 < at < 120
    rerun = killed.run("ladder-layernorm", *others)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert f"resuming from {checkpoint} at step {at}" in rerun.stdout + rerun.stderr
    for seed in SEEDS:
        for output in (
            f"data/models/{run_folder('ladder-layernorm', seed)}/model.pt",
            f"reports/curves/{run_folder('ladder-layernorm', seed)}/train_loss.csv",
            f"reports/curves/{run_folder('ladder-layernorm', seed)}/val_ppl.csv",
        ):
            assert (whole.root / output).read_bytes() == (killed.root / output).read_bytes()
    # Each member trained on: its model differs from the others'.
    models = {
        (whole.root / f"data/models/{run_folder('ladder-layernorm', s)}/model.pt").read_bytes()
        for s in SEEDS
    }
    assert len(models) == len(SEEDS)


def test_each_member_logs_its_own_curve_into_its_own_w_b_run(monkeypatch, tmp_path, train_tokens):
    from train_helpers import offline_runs, read_offline_run

    from attnlab.training.tracking import replica_group

    monkeypatch.setenv("WANDB_MODE", "offline")
    jobs = _jobs("ladder-mlp", 8)
    results = train_group(
        [Member(job) for job in jobs], _options(train_tokens, tmp_path / "runs", tmp_path)
    )
    runs = {run["config"]["seed"]: run for run in map(read_offline_run, offline_runs(tmp_path))}
    assert sorted(runs) == list(SEEDS)
    for job, result in zip(jobs, results, strict=True):
        run = runs[job.seed]
        assert run["exit_code"] == 0 and run["tags"][-1] == f"seed-{job.seed}"
        assert run["group"] == replica_group("ladder-mlp", result.config)  # one group for all
        logged = [row["train/loss"] for row in run["history"] if "train/loss" in row]
        assert logged == [loss for _, loss in result.curve]  # its own losses, every step
        assert run["summary"]["train/loss"] == result.metrics["train/loss"]
