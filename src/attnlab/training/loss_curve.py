"""The per-step train loss, moved to the host in batches (the curves of docs/catalogue.md).

Each step's loss stays on the device until ``log_every_n_steps`` of them have piled up;
then one ``stack`` and one copy bring them all to the host (one sync per interval instead
of one per step, PERFORMANCE.md), they are averaged across ranks (the global batch's loss),
handed to the loggers (W&B), each beside the learning rate its step used (``train/lr``,
a host-side float: no sync), and kept for the plots file. The points travel in the
checkpoint, so a resumed run's curve is the uninterrupted run's curve, with no step
missing or repeated. A non-finite loss stops the run at the flush that sees it: every
later step would be NaN too, and a NaN curve must never be recorded as a result. In a seed
group each member has its own curve, of its own loss (the step's ``losses``).
"""

import math
from typing import Any

import lightning.pytorch as pl
import torch
from torch import Tensor

from attnlab.errors import DivergedError
from attnlab.members import MemberCallback

LOSS = "train/loss"
LR = "train/lr"


class LossCurve(MemberCallback):
    """Record ``(step, train/loss)`` for every step; ``step`` counts updates before it.

    Step 0 is the loss of the first batch under the initial weights (about ln V).
    """

    def __init__(self, log_every_n_steps: int) -> None:
        self.every = log_every_n_steps
        self.points: list[tuple[int, float]] = []
        self._pending: list[Tensor] = []
        self._pending_lr: list[float] = []
        self._pending_start = 0
        self._trainer: pl.Trainer | None = None
        self._step_lr = 0.0

    @property
    def last_loss(self) -> float | None:
        """The newest loss on the host, or None before the first flush."""
        return self.points[-1][1] if self.points else None

    def setup(self, trainer: pl.Trainer, pl_module: pl.LightningModule, stage: str) -> None:
        """Remember the trainer: flushing needs its strategy and loggers."""
        self._trainer = trainer

    def on_train_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        """Replay a resumed run's earlier points into this run's loggers (a new W&B run)."""
        for logger in self.loggers(trainer):
            for step, value in self.points:
                logger.log_metrics({LOSS: value}, step=step)

    def on_train_batch_end(
        self,
        trainer: pl.Trainer,
        pl_module: pl.LightningModule,
        outputs: Any,
        batch: Any,
        batch_idx: int,
    ) -> None:
        """Queue this step's loss; flush every ``log_every_n_steps`` steps."""
        if self.member is not None:
            loss = outputs["losses"][self.member]
        else:
            loss = outputs["loss"] if isinstance(outputs, dict) else outputs
        if not self._pending:
            self._pending_start = batch.step
        self._pending.append(loss.detach())
        self._pending_lr.append(self._step_lr)
        # The first step and the last are flushed too, so the progress line always has a
        # loss to show, even in a run shorter than one interval.
        step = trainer.global_step
        if step % self.every == 0 or step in (1, trainer.max_steps):
            self.flush()

    def on_train_batch_start(
        self, trainer: pl.Trainer, pl_module: pl.LightningModule, batch: Any, batch_idx: int
    ) -> None:
        """Note the learning rate this step's update uses (the scheduler steps after it)."""
        self._step_lr = float(trainer.optimizers[0].param_groups[0]["lr"])

    def on_train_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        """Bring the last few losses to the host."""
        self.flush()

    def flush(self) -> None:
        """Copy the queued losses to the host, average them over ranks, log them.

        Every rank must call this at the same step: in DDP the average is a collective.

        Raises:
            DivergedError: a loss is NaN or infinite (on every rank: the values are shared).
        """
        if not self._pending or self._trainer is None:
            return
        trainer = self._trainer
        losses = torch.stack(self._pending).float()  # (n,)
        losses = trainer.strategy.reduce(losses, reduce_op="mean")  # (n,) over ranks
        values = losses.cpu().tolist()  # the one host sync of the interval
        start, rates = self._pending_start, self._pending_lr
        self._pending, self._pending_lr = [], []
        new = [(start + i, value) for i, value in enumerate(values)]
        for step, value in new:
            if not math.isfinite(value):
                raise DivergedError(f"{LOSS} is {value} at step {step}: training diverged")
        self.points.extend(new)
        for logger in self.loggers(trainer):
            for (step, value), lr in zip(new, rates, strict=True):
                logger.log_metrics({LOSS: value, LR: lr}, step=step)

    def state_dict(self) -> dict[str, Any]:
        """The points so far; queued losses are flushed first so none is lost."""
        self.flush()
        return {"points": list(self.points)}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Continue the curve of the checkpointed run."""
        self.points = [(int(step), float(loss)) for step, loss in state_dict["points"]]
