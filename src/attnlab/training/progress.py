"""What a person watching a training run sees: a live bar, or plain periodic lines.

On a terminal, a ``rich`` bar shows the step, the latest loss, tokens per second and the
time left. Anywhere else (CI, DVC's logs, a queued experiment) a bar would be a stream of
carriage returns, so one plain line goes to the log every ``log_every_n_steps`` steps.
The loss shown is the newest one :class:`~attnlab.training.loss_curve.LossCurve` has brought
to the host: the bar never adds a host sync of its own. Only rank 0 reports.
"""

import logging
import sys
import time
from typing import Any

import lightning.pytorch as pl
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    TextColumn,
    TimeRemainingColumn,
)
from rich.progress import Progress as RichProgress

from attnlab.training.loss_curve import LossCurve

log = logging.getLogger(__name__)


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


class Progress(pl.Callback):
    """Report step, loss, tokens/s and ETA.

    Args:
        name: What is training (the variant), shown on every line.
        tokens_per_step: Global tokens per optimiser step (batch x context).
        log_every_n_steps: The interval of plain lines (the bar moves every step).
        curve: Where the latest host-side loss comes from.
        live: Draw a bar; None means "when stdout is a terminal".
    """

    def __init__(
        self,
        name: str,
        tokens_per_step: int,
        log_every_n_steps: int,
        curve: LossCurve,
        live: bool | None = None,
    ) -> None:
        self.name = name
        self.tokens_per_step = tokens_per_step
        self.every = log_every_n_steps
        self.curve = curve
        self.live = sys.stdout.isatty() if live is None else live
        self._bar: RichProgress | None = None
        self._task: Any = None
        self._start_step = 0
        self._start_time = 0.0

    def on_train_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        """Start the clock (and the bar) at the first step this process trains."""
        self._start_step = trainer.global_step
        self._start_time = time.perf_counter()
        if not (self.live and trainer.is_global_zero):
            return
        self._bar = RichProgress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("loss {task.fields[loss]}"),
            TextColumn("{task.fields[rate]} tok/s"),
            TimeRemainingColumn(),
        )
        self._task = self._bar.add_task(
            self.name,
            total=trainer.max_steps,
            completed=trainer.global_step,
            loss="-",
            rate="-",
        )
        self._bar.start()

    def on_train_batch_end(
        self,
        trainer: pl.Trainer,
        pl_module: pl.LightningModule,
        outputs: Any,
        batch: Any,
        batch_idx: int,
    ) -> None:
        """Move the bar every step; write a plain line every interval."""
        if not trainer.is_global_zero:
            return
        step = trainer.global_step
        if self._bar is not None:
            loss = self.curve.last_loss
            self._bar.update(
                self._task,
                completed=step,
                loss="-" if loss is None else f"{loss:.4f}",
                rate=f"{self._rate(step):,.0f}",
            )
        elif step % self.every == 0 or step == trainer.max_steps:
            log.info(self._line(step, trainer.max_steps))

    def on_train_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        """Close the bar."""
        self._stop()

    def on_exception(
        self, trainer: pl.Trainer, pl_module: pl.LightningModule, exception: BaseException
    ) -> None:
        """Close the bar so the error prints on a clean line."""
        self._stop()

    def _stop(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def _rate(self, step: int) -> float:
        elapsed = time.perf_counter() - self._start_time
        return (step - self._start_step) * self.tokens_per_step / max(elapsed, 1e-9)

    def _line(self, step: int, total: int) -> str:
        rate = self._rate(step)
        left = (total - step) * self.tokens_per_step / max(rate, 1e-9)
        loss = self.curve.last_loss
        shown = "-" if loss is None else f"{loss:.4f}"
        return (
            f"{self.name} step {step}/{total} loss {shown} {rate:,.0f} tok/s eta {_duration(left)}"
        )
