"""The ValidationCurve callback in a plain Lightning Trainer: its steps, and a resume."""

import csv
from pathlib import Path
from types import SimpleNamespace

import lightning.pytorch as pl
import pytest
import torch
import torch.nn.functional as F
from lightning.pytorch.callbacks import ModelCheckpoint
from torch.utils.data import DataLoader, IterableDataset

from attnlab.evaluation import ValidationCurve, build_initial_model, score_windows
from attnlab.models import ModelConfig

V, T = 32, 16
CFG = ModelConfig(vocab_size=V, d_model=16, n_head=2, block_size=T)
WINDOWS = torch.randint(0, V, (6, T + 1), generator=torch.Generator().manual_seed(0))


class _OneBatchForever(IterableDataset):
    """The same batch at every step: a resumed run sees exactly what the first run saw."""

    def __iter__(self):
        batch = torch.randint(0, V, (4, T + 1), generator=torch.Generator().manual_seed(1))
        while True:
            yield batch


class _Task(pl.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.model = build_initial_model(CFG, seed=0)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        return self.model(idx)

    def training_step(self, batch: torch.Tensor, batch_idx: int) -> torch.Tensor:
        logits = self.model(batch[:, :-1])  # (B, T, V)
        return F.cross_entropy(logits.flatten(0, 1), batch[:, 1:].flatten())

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.AdamW(self.parameters(), lr=1e-2)


def _fit(curve: Path, max_steps: int, ckpt_dir: Path, ckpt_path: Path | None = None) -> _Task:
    task = _Task()
    trainer = pl.Trainer(
        max_steps=max_steps,
        accelerator="cpu",
        devices=1,
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        callbacks=[
            ValidationCurve(WINDOWS, every_n_steps=3, path=curve, batch_size=4),
            ModelCheckpoint(dirpath=ckpt_dir, every_n_train_steps=4, save_top_k=-1),
        ],
    )
    trainer.fit(task, DataLoader(_OneBatchForever(), batch_size=None), ckpt_path=ckpt_path)
    return task


def _rows(path: Path) -> list[tuple[int, float]]:
    with path.open(newline="") as f:
        reader = csv.reader(f)
        assert next(reader) == ["step", "val/ppl"]
        return [(int(step), float(ppl)) for step, ppl in reader]


def test_points_at_step_0_every_n_steps_and_the_last_step(tmp_path):
    curve = tmp_path / "plots" / "val.csv"
    task = _fit(curve, max_steps=8, ckpt_dir=tmp_path / "ckpt")
    rows = _rows(curve)
    assert [step for step, _ in rows] == [0, 3, 6, 8]
    untrained = score_windows(build_initial_model(CFG, seed=0), WINDOWS, batch_size=6).ppl
    assert rows[0][1] == pytest.approx(untrained, rel=1e-6)
    assert rows[-1][1] == pytest.approx(score_windows(task, WINDOWS, 6).ppl, rel=1e-6)
    assert rows[-1][1] != pytest.approx(rows[0][1], rel=1e-3)  # it trained; the curve saw it


def test_a_resume_drops_the_rows_past_its_checkpoint_and_writes_each_step_once(tmp_path):
    straight = tmp_path / "straight.csv"
    _fit(straight, max_steps=8, ckpt_dir=tmp_path / "a")
    # The interrupted run got as far as step 8 and then "died"; the checkpoint of step 4
    # is what a restart finds. Rows 6 and 8 were written after it and must not repeat.
    resumed = tmp_path / "resumed.csv"
    _fit(resumed, max_steps=8, ckpt_dir=tmp_path / "b")
    assert [step for step, _ in _rows(resumed)] == [0, 3, 6, 8]
    checkpoint = next((tmp_path / "b").glob("*step=4.ckpt"))
    _fit(resumed, max_steps=8, ckpt_dir=tmp_path / "c", ckpt_path=checkpoint)
    assert _rows(resumed) == _rows(straight)  # same steps, and the retrained points agree
    assert [step for step, _ in _rows(resumed)] == [0, 3, 6, 8]


def test_a_resume_rebuilds_the_curve_from_the_checkpoint_when_dvc_deleted_the_file(tmp_path):
    straight = tmp_path / "straight.csv"
    _fit(straight, max_steps=8, ckpt_dir=tmp_path / "a")
    curve = tmp_path / "curve.csv"
    _fit(curve, max_steps=8, ckpt_dir=tmp_path / "b")
    curve.unlink()  # dvc repro removes a stage's outputs before rerunning it
    checkpoint = next((tmp_path / "b").glob("*step=4.ckpt"))
    _fit(curve, max_steps=8, ckpt_dir=tmp_path / "c", ckpt_path=checkpoint)
    assert _rows(curve) == _rows(straight)


def test_a_fresh_fit_replaces_an_old_file(tmp_path):
    curve = tmp_path / "val.csv"
    curve.write_text("step,val/ppl\n0,1.0\n3,2.0\n99,3.0\n")
    _fit(curve, max_steps=2, ckpt_dir=tmp_path / "ckpt")
    assert [step for step, _ in _rows(curve)] == [0, 2]


def test_only_rank_zero_scores_and_writes(tmp_path):
    curve = tmp_path / "val.csv"
    callback = ValidationCurve(WINDOWS, every_n_steps=1, path=curve, batch_size=4)
    trainer = SimpleNamespace(is_global_zero=False, global_step=0)
    callback.on_train_start(trainer, _Task())
    callback.on_train_batch_end(trainer, _Task(), None, None, 0)
    callback.on_train_end(trainer, _Task())
    assert not curve.exists()


def test_a_resume_at_a_due_step_the_checkpoint_missed_takes_that_point(tmp_path):
    """A checkpoint callback that runs before this one saves step 4 without its point."""
    curve = tmp_path / "val.csv"
    callback = ValidationCurve(WINDOWS, every_n_steps=4, path=curve, batch_size=4)
    callback.load_state_dict({"points": [(0, 30.0)]})
    task = _Task()
    trainer = SimpleNamespace(is_global_zero=True, global_step=4, loggers=[])
    callback.on_train_start(trainer, task)
    assert [step for step, _ in _rows(curve)] == [0, 4]
    assert _rows(curve)[1][1] == pytest.approx(score_windows(task, WINDOWS, 6).ppl, rel=1e-6)
