"""SIGINT handled like SIGTERM: training stops at the next step boundary, saved.

Serves every trained experiment of docs/catalogue.md. Lightning turns SIGTERM into a stop at
a step boundary (where the state is consistent, so it can be checkpointed), but leaves
SIGINT to Python, whose ``KeyboardInterrupt`` can land inside an optimiser step and makes
Lightning exit 1 without saving. ``dvc queue kill`` and Ctrl-C send SIGINT, so during a fit
SIGINT is passed on as SIGTERM to this very process: one path for both, whatever
Lightning's handler does (forwarding it to DDP workers included).

A sweep worker runs many fits, and a stop can come between them, or while a trial is set
up before its fit listens: :func:`defer_stop_signals` records such a stop instead of
dying with the trial still marked running, the sweep asks :func:`stop_requested` before
each trial, and :class:`DeferredStop` hands a stop recorded during the set-up to the fit.
"""

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType

import lightning.pytorch as pl


@dataclass
class StopSignal:
    """The name of the signal that stopped training (SIGTERM unless SIGINT came)."""

    name: str = "SIGTERM"


@contextmanager
def sigint_as_sigterm() -> Iterator[StopSignal]:
    """During the block, SIGINT is re-sent to this process as SIGTERM.

    Outside the main thread (where Python cannot install handlers) SIGINT is left alone.
    """
    received = StopSignal()
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def forward(signum: int, frame: FrameType | None) -> None:
        received.name = signal.Signals(signum).name
        os.kill(os.getpid(), signal.SIGTERM)

    previous = signal.signal(signal.SIGINT, forward)
    try:
        yield received
    finally:
        signal.signal(signal.SIGINT, previous)


_deferred: list[str] = []  # the stop signals recorded outside a fit, in this process


def defer_stop_signals() -> None:
    """From now on, SIGTERM and SIGINT outside a fit are recorded, not fatal.

    A fit still stops at its next step: Lightning keeps a handler that was installed before
    it and calls it beside its own, which only records the signal once more.
    """

    def record(signum: int, frame: FrameType | None) -> None:
        _deferred.append(signal.Signals(signum).name)

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, record)


def stop_requested() -> str | None:
    """The name of the first stop signal :func:`defer_stop_signals` recorded, if any."""
    return _deferred[0] if _deferred else None


class DeferredStop(pl.Callback):
    """A stop recorded before the fit listened is sent again once it does."""

    def on_train_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        """Re-send SIGTERM now that Lightning turns it into a stop at the step boundary."""
        if stop_requested() is not None:
            os.kill(os.getpid(), signal.SIGTERM)
