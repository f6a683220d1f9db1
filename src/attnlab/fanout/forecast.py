"""How long a fan-out's plan takes on this machine: the record's costs, scaled by its speed.

Serves ``attnlab repro`` over the whole catalogue: the plan it prints before long work and
the time left on its progress line both come from here. Each planned stage costs what the
record measured for it (:mod:`~attnlab.fanout.costs`), times how much slower this machine
multiplies float32 matrices than the machine that measured the record (:func:`calibrate`,
against :data:`REFERENCE_GFLOPS`), and the stages are list-scheduled, longest first, on
the fan-out's jobs, each after the stages it waits for.

On a GPU the record's GPU runs are the costs and no calibration applies (one GPU model
trained them all).
"""

import heapq
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from attnlab.fanout.costs import StageCosts

# calibrate()'s figure for the kind of machine that trained the record's CPU runs (two
# cores of an AMD EPYC virtual machine), measured there when the forecast was added: the
# record itself carries wall times, not the speed of the machine that took them.
REFERENCE_GFLOPS = 85.0
# Work predicted to take longer than this gets its plan printed before it starts.
LONG_S = 15 * 60
# 512 tokens through the MLP's first matrix (d_model 128 -> 512): a millisecond's product.
_SHAPE = (512, 128, 512)


def calibrate(budget_s: float = 0.5) -> float:
    """This machine's one-thread float32 matrix-product speed in GFLOP/s.

    The fastest of the products that fit in ``budget_s``: a product takes a few
    milliseconds, so one of them runs without being interrupted even while other processes
    load the machine, and the figure measures the CPU, not its load at that moment. Torch's
    thread count is restored afterwards.
    """
    import torch  # here: the fan-out imports this module, and `attnlab --help` must not pay

    tokens, width, hidden = _SHAPE
    a, b = torch.randn(tokens, width), torch.randn(width, hidden)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        fastest, began = float("inf"), time.perf_counter()
        while time.perf_counter() - began < budget_s:
            start = time.perf_counter()
            torch.mm(a, b)
            fastest = min(fastest, time.perf_counter() - start)
        return 2 * tokens * width * hidden / fastest / 1e9
    finally:
        torch.set_num_threads(threads)


def schedule(seconds: Mapping[str, float], needs: Mapping[str, Iterable[str]], jobs: int) -> float:
    """Wall time of a longest-first list schedule of ``seconds`` on ``jobs`` workers.

    A stage starts once every stage of ``needs`` that is also scheduled has finished.
    """
    waits = {name: [d for d in needs.get(name, ()) if d in seconds] for name in seconds}
    free = [0.0] * max(1, jobs)  # when each worker is next free
    finished: dict[str, float] = {}
    pending = sorted(seconds, key=lambda name: -seconds[name])
    while pending:
        start = heapq.heappop(free)
        ready = next(
            (n for n in pending if all(finished.get(d, float("inf")) <= start for d in waits[n])),
            None,
        )
        if ready is None:  # everything left waits on a running stage: idle until one ends
            heapq.heappush(free, min(end for end in finished.values() if end > start))
            continue
        pending.remove(ready)
        finished[ready] = start + seconds[ready]
        heapq.heappush(free, finished[ready])
    return max(finished.values(), default=0.0)


@dataclass(frozen=True)
class Forecast:
    """Each planned stage's predicted seconds on this machine, and how they were scaled.

    Attributes:
        seconds: Planned stage -> predicted seconds here.
        needs: Planned stage -> the planned stages it waits for.
        jobs: Stages at once.
        basis: One line on where the figures come from (the calibration's result).
    """

    seconds: Mapping[str, float]
    needs: Mapping[str, Iterable[str]]
    jobs: int
    basis: str

    @property
    def wall_s(self) -> float:
        """The whole plan's predicted wall time."""
        return schedule(self.seconds, self.needs, self.jobs)

    def time_left(self, unfinished: Iterable[str], running: Mapping[str, float]) -> float:
        """The predicted time until ``unfinished`` stages are done.

        Args:
            unfinished: Stages not finished yet (running or waiting).
            running: Running stage -> seconds it has run (its prediction shrinks by that).
        """
        left = {
            name: max(0.0, self.seconds.get(name, 0.0) - running.get(name, 0.0))
            for name in unfinished
        }
        return schedule(left, self.needs, self.jobs)

    def plan_lines(self, shown: int = 10) -> list[str]:
        """The plan as printed before long work: the longest stages, then the rest counted."""
        longest = sorted(self.seconds, key=lambda name: -self.seconds[name])
        width = max((len(name) for name in longest[:shown]), default=0)
        lines = [f"  {name:<{width}}  {clock(self.seconds[name])}" for name in longest[:shown]]
        if len(longest) > shown:
            rest = sum(self.seconds[name] for name in longest[shown:])
            lines.append(f"  ... and {len(longest) - shown} more stages, {clock(rest)} together")
        return lines


def forecast(
    costs: StageCosts,
    order: Iterable[str],
    needs: Mapping[str, Iterable[str]],
    jobs: int,
    on_gpu: bool,
) -> Forecast:
    """The forecast of planned stages ``order`` from the record's ``costs``.

    Args:
        costs: The record's costs of every stage (built for the device kind in use).
        order: The planned stages.
        needs: Each planned stage's planned upstream stages.
        jobs: Stages at once.
        on_gpu: The stages train on GPUs (the record's GPU costs, uncalibrated).
    """
    if on_gpu:
        factor, basis = 1.0, "the record's GPU runs"
    else:
        measured = calibrate()
        factor = REFERENCE_GFLOPS / measured
        basis = (
            f"the record's CPU runs x{factor:.2f}: this CPU multiplies float32 matrices at "
            f"{measured:.0f} GFLOP/s on one thread, the record's at {REFERENCE_GFLOPS:.0f}"
        )
    seconds = {name: costs.of(name) * factor for name in order}
    return Forecast(seconds, needs, jobs, basis)


def clock(seconds: float) -> str:
    """``h:mm:ss`` (or ``m:ss`` under an hour)."""
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
