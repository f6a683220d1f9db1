"""The val/ppl curve through Lightning's validation loop: its points, its values, its resume.

The curve's points are scored by the trainer's validation loop; they must be the numbers
the evaluate stage's own function gives on the same windows, and drawing them must leave
the training itself (its RNG stream, its train mode) untouched.
"""

import csv
from pathlib import Path

import lightning.pytorch as pl
import pytest
import torch
from train_helpers import shrunk_params, train_here

from attnlab.config import parse_params
from attnlab.data.tokens import read_tokens
from attnlab.evaluation import build_initial_model
from attnlab.metrics import ValidationCurve, perplexity, sample_windows, score_windows
from attnlab.metrics.validation_curve import of_split
from attnlab.paths import BEST_PPL, BEST_STEP
from attnlab.training import TrainJob

VARIANT = "ladder-layernorm"
BATCH = 4  # windows per validation batch: 6 windows make batches of 4 and 2


def _windows(train_tokens: Path) -> torch.Tensor:
    return sample_windows(read_tokens(train_tokens.with_name("val.parquet")), 32, 6, 0)


def _rows(path: Path) -> list[tuple[int, float]]:
    with path.open(newline="") as f:
        reader = csv.reader(f)
        assert next(reader) == ["step", "val/ppl"]
        return [(int(step), float(ppl)) for step, ppl in reader]


class _ScoreEveryStep(pl.Callback):
    """The old way, beside the fit: ``score_windows`` on the same windows after each step."""

    def __init__(self, windows: torch.Tensor) -> None:
        self.windows, self.ppl = windows, {}

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        self.ppl[trainer.global_step] = score_windows(pl_module.model, self.windows, BATCH).ppl


class _CrashAtStep(pl.Callback):
    """A run that dies at ``step`` (after its checkpoint of step 4), like a killed stage."""

    def __init__(self, step: int) -> None:
        self.step = step

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        if trainer.global_step == self.step:
            raise RuntimeError(f"killed at step {self.step}")


def test_points_at_step_0_every_n_steps_and_the_last_equal_the_evaluate_function(
    train_tokens, tmp_path
):
    windows, params = _windows(train_tokens), shrunk_params(steps=7)
    curve = ValidationCurve(windows, 3, tmp_path / "val_ppl.csv", BATCH)
    scored = _ScoreEveryStep(windows)
    train_here(params, VARIANT, tmp_path, train_tokens, curve=curve, callbacks=[scored])
    rows = _rows(tmp_path / "val_ppl.csv")
    assert [step for step, _ in rows] == [0, 3, 6, 7]
    assert rows == curve.points  # the file holds exactly the points, repr-exact
    job = TrainJob.from_params(parse_params(params), VARIANT)
    untrained = build_initial_model(job.variant.model, job.init_seed)
    assert rows[0][1] == score_windows(untrained, windows, BATCH).ppl
    for step, ppl in rows[1:]:
        assert ppl == scored.ppl[step], step  # bit for bit, not approximately
    assert rows[-1][1] < rows[0][1] - 10  # it trained, and the curve saw it


class _ScoreSplitEveryStep(pl.Callback):
    """P0's whole-split perplexity (the evaluate stage's function) after each step."""

    def __init__(self, val: torch.Tensor, batch_size: int) -> None:
        self.val, self.batch_size, self.ppl = val, batch_size, {}

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        model = pl_module.model
        self.ppl[trainer.global_step] = perplexity(model, self.val, 32, self.batch_size).ppl


def test_a_split_curve_scores_the_whole_split_and_its_best_point_is_its_lowest(
    train_tokens, tmp_path
):
    # The early-stopping protocol reads the best point as the run's val/ppl had it stopped
    # there: each point must be exactly what the evaluate stage would have measured.
    val = read_tokens(train_tokens.with_name("val.parquet"))
    assert (val.shape[0] - 1) % 32, "the split ends in a shorter window (the tail)"
    curve = of_split(val, 32, 2, tmp_path / "val_ppl.csv", 256)
    scored = _ScoreSplitEveryStep(val, 256)
    train_here(shrunk_params(steps=5), VARIANT, tmp_path, train_tokens, curve=curve,
               callbacks=[scored])  # fmt: skip
    assert [step for step, _ in curve.points] == [0, 2, 4, 5]
    for step, ppl in curve.points[1:]:
        assert ppl == scored.ppl[step], step  # bit for bit
    lowest = min(curve.points[1:], key=lambda point: point[1])
    assert curve.best() == {BEST_STEP: lowest[0], BEST_PPL: lowest[1]}


def test_the_best_point_is_the_earliest_lowest_after_step_0(tmp_path):
    curve = ValidationCurve(torch.zeros(1, 2, dtype=torch.long), 1, tmp_path / "c.csv", 1)
    curve.points = [(0, 1.0), (1, 5.0), (2, 3.0), (3, 3.0), (4, 4.0)]
    assert curve.best() == {BEST_STEP: 2, BEST_PPL: 3.0}  # step 0's untrained point is no stop
    curve.points = [(0, 9.0)]
    assert curve.best() == {}


def test_drawing_the_curve_leaves_the_training_bit_identical(train_tokens, tmp_path):
    # Dropout on: a validation that drew from the global RNG, or left the model in eval
    # mode, would change every later loss.
    params = shrunk_params(steps=6, model={"dropout": 0.1})
    plain = train_here(params, VARIANT, tmp_path / "plain", train_tokens)
    curve = ValidationCurve(_windows(train_tokens), 1, tmp_path / "val_ppl.csv", BATCH)
    drawn = train_here(params, VARIANT, tmp_path / "drawn", train_tokens, curve=curve)
    assert [step for step, _ in curve.points] == list(range(7))
    assert drawn.curve == plain.curve  # every step's loss, exactly
    for name, weight in plain.model.state_dict().items():
        assert torch.equal(weight, drawn.model.state_dict()[name]), name
    assert drawn.model.training


@pytest.mark.parametrize(
    ("every", "steps", "deleted"),
    [(2, [0, 2, 4, 6, 8], False), (2, [0, 2, 4, 6, 8], True), (3, [0, 3, 6, 8], False)],
    ids=["checkpoint-step-validates", "dvc-deleted-the-file", "checkpoint-between-points"],
)
def test_a_resumed_curve_equals_the_uninterrupted_one(
    train_tokens, tmp_path, every, steps, deleted
):
    # Checkpoints every 4 steps; the run dies at step 6, after writing its point of step 6
    # when it has one; the rerun resumes at step 4.
    params = shrunk_params(steps=8, runtime={"checkpoint": {"every_n_train_steps": 4}})
    windows = _windows(train_tokens)
    straight = ValidationCurve(windows, every, tmp_path / "straight.csv", BATCH)
    whole = train_here(params, VARIANT, tmp_path / "a", train_tokens, curve=straight)
    path = tmp_path / "resumed.csv"
    with pytest.raises(RuntimeError, match="killed at step 6"):
        train_here(
            params, VARIANT, tmp_path / "b", train_tokens,
            curve=ValidationCurve(windows, every, path, BATCH), callbacks=[_CrashAtStep(6)],
        )  # fmt: skip
    if deleted:
        path.unlink()  # dvc repro removes a stage's outputs before rerunning it
    resumed = train_here(
        params, VARIANT, tmp_path / "b", train_tokens,
        curve=ValidationCurve(windows, every, path, BATCH),
    )  # fmt: skip
    assert resumed.metrics["resumed_from_step"] == 4
    assert [step for step, _ in _rows(path)] == steps  # each step once
    assert _rows(path) == _rows(tmp_path / "straight.csv")
    assert resumed.curve == whole.curve


def test_a_fresh_fit_replaces_an_old_file(train_tokens, tmp_path):
    path = tmp_path / "val_ppl.csv"
    path.write_text("step,val/ppl\n0,1.0\n3,2.0\n99,3.0\n")
    curve = ValidationCurve(_windows(train_tokens), 3, path, BATCH)
    train_here(shrunk_params(steps=2), VARIANT, tmp_path, train_tokens, curve=curve)
    assert [step for step, _ in _rows(path)] == [0, 2]
