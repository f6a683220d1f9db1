"""The validation curve: val/ppl at points during training, as a DVC plots file.

Every trained variant gets a ``val/ppl`` curve beside its train-loss curve. Each point
scores the whole validation split as P0's perplexity does (:func:`of_split`: the same
windows, batches and tail as :func:`~attnlab.metrics.perplexity`), so a point is the
``val/ppl`` the run would have had, had it stopped there, and the curve's lowest point is
what early stopping would keep (:meth:`ValidationCurve.best`). Lightning's validation loop
scores the points (:class:`~attnlab.training.LanguageModelTask` over
``TokenWindows.val_dataloader``); this callback keeps them, in the plots file, the
checkpoint and W&B.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
from pathlib import Path
from typing import Any

import lightning.pytorch as pl
from torch import Tensor

from attnlab.errors import DivergedError
from attnlab.files import write_atomically
from attnlab.members import MemberCallback
from attnlab.metrics.windows import Windows, cut_windows
from attnlab.paths import BEST_PPL, BEST_STEP

PPL = "val/ppl"
# The W&B key of a curve point; the run's summary holds the final val/ppl (whole_split.py).
POINT = "val/ppl_curve"


class ValidationCurve(MemberCallback):
    """Write ``step, val/ppl`` to a CSV plots file at each point of Lightning's validation.

    The trainer validates at step 0 (its sanity check, over every batch), at every
    multiple of ``every_n_steps`` and at the last step of the fit (this callback asks for
    that one); ``step`` counts the updates made, and the value is the ``val/ppl`` that
    the LightningModule logged (``trainer.callback_metrics``). Only global rank zero
    writes and logs; the ranks all validate alike (a copy of the same windows each). At
    each point the whole file is rewritten from ``points`` and renamed into place, never
    appended to: whatever else once wrote there (a killed or orphaned run of the same
    configuration), the file holds this run's curve and nothing else. Each point is also
    handed to the trainer's loggers (W&B) as ``val/ppl_curve``; a non-finite one stops the
    fit with :class:`~attnlab.errors.DivergedError`.

    Resuming: the points travel in the checkpoint (``state_dict``), because ``dvc repro``
    deletes a stage's outputs before rerunning it, file and all. When a fit starts at
    global step ``s > 0``, the file is rewritten from the checkpoint's points (or, if the
    checkpoint has none, from the file's own rows) up to ``s``: rows written after the
    checkpoint by the killed run are dropped, so the retrained steps appear once. A fit
    from step 0 starts the file afresh.

    Args:
        windows: (W, T + 1) int64 validation windows (:func:`of_split`: the whole split's).
        every_n_steps: steps between points (already scaled by the budget).
        path: the CSV plots file (``step,val/ppl``); its folder is created if missing.
        batch_size: windows per forward pass.
        tail: (1, r + 1) the split's last, shorter window, scored as a batch of its own.

    Attributes:
        points: ``(step, val/ppl)`` so far, oldest first, on rank zero.
    """

    def __init__(
        self,
        windows: Tensor,
        every_n_steps: int,
        path: Path,
        batch_size: int,
        tail: Tensor | None = None,
    ) -> None:
        if every_n_steps <= 0:
            raise ValueError(f"every_n_steps: must be positive, got {every_n_steps}")
        super().__init__()
        self.windows = windows
        self.tail = tail
        self.every_n_steps = every_n_steps
        self.path = Path(path)
        self.batch_size = batch_size
        self.points: list[tuple[int, float]] = []

    def batches(self) -> list[Tensor]:
        """What each point scores, in order: the windows in batches, then the tail alone."""
        return Windows(self.windows, self.tail).batches(self.batch_size)

    def best(self) -> dict[str, float | int]:
        """The curve's lowest point after step 0, for train.json: ``best/step``, ``best/val/ppl``.

        Empty for a curve without such a point. The first of equal values wins: early
        stopping keeps the earliest weights that scored best.
        """
        trained = [(step, ppl) for step, ppl in self.points if step > 0]
        if not trained:
            return {}
        step, ppl = min(trained, key=lambda point: point[1])
        return {BEST_STEP: step, BEST_PPL: ppl}

    def on_sanity_check_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        """Start a new curve: Lightning's sanity check, step 0's point, runs on no resume."""
        self.points = []

    def on_train_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        """On a resume, cut the curve back to the step the fit starts at and replay it."""
        step = trainer.global_step
        if not trainer.is_global_zero or step == 0:
            return
        if not self.points:
            self.points = self._read()
        self.points = [(s, ppl) for s, ppl in self.points if s <= step]
        self.write()
        for logger in self.loggers(trainer):  # a resumed run is a new W&B run: replay
            for s, ppl in self.points:
                logger.log_metrics({POINT: ppl}, step=s)

    def on_train_batch_end(
        self,
        trainer: pl.Trainer,
        pl_module: pl.LightningModule,
        outputs: object,
        batch: object,
        batch_idx: int,
    ) -> None:
        """At the last step, ask for the last point: Lightning validates when asked to stop."""
        if trainer.global_step >= trainer.max_steps:  # every rank: they all validate
            trainer.should_stop = True

    def on_validation_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        """Record the point the validation loop just scored."""
        if not trainer.is_global_zero:
            return
        step, ppl = trainer.global_step, float(trainer.callback_metrics[self.metric(PPL)])
        if not math.isfinite(ppl):
            raise DivergedError(f"{PPL} is {ppl} at step {step}: training diverged")
        self.points.append((step, ppl))
        self.write()
        for logger in self.loggers(trainer):
            logger.log_metrics({POINT: ppl}, step=step)

    def definition(self) -> dict[str, Any]:
        """What shapes the points besides the weights: the windows' SHA-256, cadence, batch.

        A checkpoint's fingerprint holds it, so that a run never resumes a curve scored
        on other windows or at another cadence.
        """
        digest = hashlib.sha256()
        for part in (self.windows, *([] if self.tail is None else [self.tail])):
            digest.update(part.detach().cpu().contiguous().numpy().tobytes())
        return {
            "windows": digest.hexdigest(),
            "shape": [list(self.windows.shape), None if self.tail is None else self.tail.shape[1]],
            "every_n_steps": self.every_n_steps,
            "batch_size": self.batch_size,
        }

    def state_dict(self) -> dict[str, Any]:
        """The points so far (saved in every checkpoint)."""
        return {"points": list(self.points)}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Continue the curve of the checkpointed run."""
        self.points = [(int(step), float(ppl)) for step, ppl in state_dict["points"]]

    def _read(self) -> list[tuple[int, float]]:
        if not self.path.is_file():
            return []
        with self.path.open(newline="", encoding="utf-8") as f:
            return [(int(row["step"]), float(row[PPL])) for row in csv.DictReader(f)]

    def write(self) -> None:
        """Rewrite the plots file from ``points``, all-or-nothing.

        Besides each point, the caller writes it once more with the run's other outputs:
        a rerun that resumes at the last step validates nothing, and must still leave the
        file that ``dvc repro`` deleted before it.

        Raises:
            WriteError: the file cannot be written (naming it).
        """
        text = io.StringIO(newline="")
        writer = csv.writer(text)
        writer.writerow(("step", PPL))
        writer.writerows((step, repr(ppl)) for step, ppl in self.points)  # repr: exact
        write_atomically(self.path, text.getvalue().encode("utf-8"))


def of_split(
    val_tokens: Tensor, length: int, every_n_steps: int, path: Path, batch_size: int
) -> ValidationCurve:
    """The curve of a run trained at context ``length``: each point the whole split's val/ppl.

    The windows are P0's cut of the split (:func:`~attnlab.metrics.windows.cut_windows`)
    in the evaluate stage's batches, so the last point is the run's ``val/ppl`` up to
    float rounding.
    """
    cut = cut_windows(val_tokens, length)
    return ValidationCurve(cut.full, every_n_steps, path, batch_size, cut.tail)
