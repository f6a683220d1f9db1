"""Held-out accuracy along training (E16, E17 of docs/catalogue.md), at log-spaced steps.

Does a model solve the task at once or late, and does the bag of words get there first?
:class:`AccuracyCurve` asks the model the held-out questions at steps 0, 1, 2, 4, ... and
the last, with winograd-score's own scoring (:func:`~attnlab.winograd.scoring.score_model`),
so the curve's last point is the run's ``winograd/acc``. Asking draws no random number
and changes no weight: the forward pass runs in eval mode under ``no_grad``, so a run
trains the same model with or without the curve.
"""

from __future__ import annotations

from typing import Any

import lightning.pytorch as pl
from torch import Tensor

from attnlab.winograd.scoring import score_model

ACCURACY = "accuracy"  # the CSV's value column: the held-out share answered right
# The W&B key of a point: the same number the winograd-score stage records at the end.
ACC = "winograd/acc"


def log_spaced_steps(last: int) -> list[int]:
    """Steps 0, 1, 2, 4, ... below ``last``, and ``last`` itself: ``8`` gives 0 1 2 4 8."""
    steps, step = [0], 1
    while step < last:
        steps.append(step)
        step *= 2
    return [*steps, last] if last > 0 else steps


class AccuracyCurve(pl.Callback):
    """Score the held-out sentences at ``steps`` (updates made): ``(step, accuracy)`` points.

    Step 0 is scored when the fit starts from scratch (the initial weights); the others
    at the end of the batch that makes that many updates. Only global rank zero scores
    (DDP's ranks hold the same weights). The points travel in the checkpoint, so a
    resumed run's curve is the uninterrupted run's. Accuracy is rounded as
    winograd-score rounds it (4 places).

    Args:
        held_out: The held-out split's token ids, (N, 18).
        steps: The steps to score at, e.g. :func:`log_spaced_steps` of the run's last.

    Attributes:
        points: ``(step, accuracy)`` so far, oldest first, on rank zero.
    """

    def __init__(self, held_out: Tensor, steps: list[int]) -> None:
        super().__init__()
        self.held_out = held_out
        self.steps = frozenset(steps)
        self.points: list[tuple[int, float]] = []

    def on_train_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        """From scratch, score the initial weights; on a resume, drop points past its step."""
        step = trainer.global_step
        self.points = [(s, acc) for s, acc in self.points if s <= step] if step else []
        if step == 0:
            self._score(trainer, pl_module)

    def on_train_batch_end(
        self,
        trainer: pl.Trainer,
        pl_module: pl.LightningModule,
        outputs: Any,
        batch: Any,
        batch_idx: int,
    ) -> None:
        """Score after this batch's update when its step is one of ``steps``."""
        if trainer.global_step in self.steps:
            self._score(trainer, pl_module)

    def _score(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        if not trainer.is_global_zero:
            return
        model = pl_module.model  # the LanguageModel itself, not a compiled step
        sentences = self.held_out.to(next(model.parameters()).device)  # (N, 18)
        step, acc = trainer.global_step, round(score_model(model, sentences).acc, 4)
        self.points.append((step, acc))
        for logger in trainer.loggers:
            logger.log_metrics({ACC: acc}, step=step)

    def state_dict(self) -> dict[str, Any]:
        """The points so far (saved in every checkpoint)."""
        return {"points": list(self.points)}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Continue the curve of the checkpointed run."""
        self.points = [(int(step), float(acc)) for step, acc in state_dict["points"]]
