"""SIGINT handled like SIGTERM: training stops at the next step boundary, saved.

Serves every trained experiment of docs/catalogue.md. Lightning turns SIGTERM into a stop at
a step boundary (where the state is consistent, so it can be checkpointed), but leaves
SIGINT to Python, whose ``KeyboardInterrupt`` can land inside an optimiser step and makes
Lightning exit 1 without saving. ``dvc queue kill`` and Ctrl-C send SIGINT, so during a fit
SIGINT is passed on as SIGTERM to this very process: one path for both, whatever
Lightning's handler does (forwarding it to DDP workers included).
"""

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType


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
