"""What a SLURM job of the fan-out runs: the unit's local child, signals passed on.

``python -m attnlab.fanout.slurm_job [--allow-missing] [--group] STAGE...`` is the batch
command of each job :mod:`~attnlab.fanout.slurm` submits. It starts the unit exactly as the
local fan-out starts it (:class:`~attnlab.fanout.children.Child`: ``dvc repro
--single-item`` or the seed-group runner), writing to the job's log, and waits for it.

Signals reach this process alone (``--signal=B:...``, ``scancel --batch``), and it passes
them on as the local launcher does: SIGTERM to the stage command under DVC, which stops at
its next step with its checkpoint. SIGUSR1 is SLURM's warning before the time limit: once
the stage has stopped, the job requeues itself (``scontrol requeue``) and its rerun
continues from the checkpoint. SIGTERM or SIGINT (the launcher's Ctrl-C, ``scancel``, a
preemption) stops without a requeue: a preemption in ``REQUEUE`` mode requeues the job
itself. The last line of the log gives the exit status.
"""

import argparse
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from attnlab.fanout.children import Child, recorded
from attnlab.fanout.launcher import POLL_S, STOP_GRACE_S

REQUEUE_WAIT_S = 300  # after `scontrol requeue`, SLURM ends the run within its KillWait


class _Signals:
    """The signals that stop the unit, and whether one asked for a requeue."""

    def __init__(self) -> None:
        self.stop = False
        self.requeue = False
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1):
            signal.signal(signum, self._handle)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.stop = True
        self.requeue |= signum == signal.SIGUSR1


def run_unit(stages: Sequence[str], log: Path, allow_missing: bool, grouped: bool) -> int:
    """Run the unit in this job until it ends or a signal stops it; the job's exit status."""
    signals = _Signals()
    job = os.environ.get("SLURM_JOB_ID", "?")
    restarts = os.environ.get("SLURM_RESTART_COUNT", "0")
    print(f"attnlab: job {job} started at {time.time():.3f} (requeued {restarts} time(s))")
    sys.stdout.flush()
    # The stage runs as it runs outside SLURM: Lightning reads SLURM_* as a job it should
    # manage (its own SIGUSR1 requeue, tasks for its devices), which here is this process's.
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_") or k == "SLURM_CONF"}
    child = Child.start(tuple(stages), Path.cwd(), log, env, None, 1, allow_missing, grouped)
    deadline = None
    while child.group_alive():
        if signals.stop:
            deadline = deadline or time.monotonic() + STOP_GRACE_S
            if time.monotonic() > deadline:
                child.kill()
            else:
                child.stop()
        time.sleep(POLL_S)
    status = child.poll() or 0
    if status and signals.requeue and not all(recorded(child.output(), s) for s in stages):
        print(f"attnlab: time limit near: stopped at a checkpoint, requeueing job {job}")
        sys.stdout.flush()
        subprocess.run(["scontrol", "requeue", job], check=False)
        # SLURM ends this run itself, as requeued: an exit of ours could race it and end
        # the job as failed instead.
        time.sleep(REQUEUE_WAIT_S)
        return status
    print(f"attnlab: job exits {status}")
    return status


def main(argv: Sequence[str] | None = None) -> None:
    """The command line: ``--log LOG [--allow-missing] [--group] STAGE...``."""
    parser = argparse.ArgumentParser(prog="python -m attnlab.fanout.slurm_job")
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--allow-missing", action="store_true")
    parser.add_argument("--group", action="store_true")
    parser.add_argument("stages", nargs="+")
    args = parser.parse_args(argv)
    sys.exit(run_unit(args.stages, args.log, args.allow_missing, args.group))


if __name__ == "__main__":
    main()
