"""One stage as a child process: ``dvc repro --single-item <stage>``, logged and stoppable.

A seed group (the stages of one family and variant, :mod:`~attnlab.fanout.seed_groups`) is
one child too: :mod:`~attnlab.fanout.group_stage`, which prints DVC's lines for each stage.

Serves the fan-out of the whole catalogue. Each child is DVC itself, so the stage runs
exactly as in a serial ``dvc repro``: DVC checks that it changed, runs its command,
hashes its outputs and writes its entry into ``dvc.lock``. DVC holds the repository lock
only while it collects and records (never while the command runs), so children contend
for it for seconds at a time; ``--wait-for-lock`` makes each wait its turn, and a child
that still fails on a lock (another DVC command's per-path lock, say) is retried by the
launcher (:func:`lost_a_lock`).

A child is the leader of its own process group: Ctrl-C in the terminal reaches only the
launcher, which then sends SIGTERM to the stage command under each DVC, never to DVC
itself, nor to a helper that left the group for a session of its own as W&B's service
does: signalled, the service dies before the stopped stage has finished its W&B run,
and the run's teardown error replaces the stop (a sweep trial then counts as failed).
The stage command saves its state at the next step boundary (training checkpoints) and
exits; DVC sees it fail and ends without recording it, or, when the command had already
finished, records it. Either way DVC is never cut short inside its own write of
``dvc.lock``, which truncates the file before it dumps the new one.
"""

import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import psutil

# What DVC prints when it could not take its repository lock, or a stage's per-path lock.
_LOCK_FAILURES = ("Unable to acquire lock", "is busy, it is being blocked by")
_RAN = "Running stage '"
_SKIPPED = "didn't change, skipping"
_RESTORED = "is cached - skipping run"  # DVC's run cache had these exact inputs' outputs
_RECORDED = "Recorded '"  # a group's stage, recorded though a later one of it failed


def repro_command(stage: str, allow_missing: bool = False) -> list[str]:
    """The command that reproduces ``stage`` alone, with this interpreter's DVC."""
    command = [sys.executable, "-m", "dvc", "--wait-for-lock", "repro", "--single-item"]
    return [*command, "--allow-missing", stage] if allow_missing else [*command, stage]


def runner_command(stages: Sequence[str], allow_missing: bool = False) -> list[str]:
    """The command that reproduces ``stages`` as one seed group, with this interpreter.

    The runner is named, not imported: ``python -m`` of a module this package had already
    imported would warn at the top of every group's log.
    """
    flags = ["--allow-missing"] if allow_missing else []
    return [sys.executable, "-m", "attnlab.fanout.group_stage", *flags, *stages]


def child_name(stages: tuple[str, ...]) -> str:
    """A child's name: its stage, or a seed group's first stage and how many more."""
    return stages[0] if len(stages) == 1 else f"{stages[0]}+{len(stages) - 1}"


class Unit(Protocol):
    """What the launcher asks of a started unit (a local child, or a SLURM job).

    :class:`Child` and :class:`~attnlab.fanout.slurm.SlurmJob` both answer it.
    """

    stages: tuple[str, ...]
    log: Path
    device: str | None
    attempt: int

    @property
    def seconds(self) -> float: ...  # noqa: D102

    def poll(self) -> int | None: ...  # noqa: D102

    def stop(self) -> None: ...  # noqa: D102

    def kill(self) -> None: ...  # noqa: D102

    def group_alive(self) -> bool: ...  # noqa: D102

    def output(self) -> str: ...  # noqa: D102


@dataclass
class Child:
    """A running ``dvc repro --single-item`` (or seed group), its log file and its timing.

    Attributes:
        stages: The stage it reproduces; a seed group's stages.
        log: Where its stdout and stderr go.
        device: The GPU it was given (None on a CPU).
        attempt: 1 for the first start, more after lock retries.
    """

    stages: tuple[str, ...]
    log: Path
    device: str | None
    attempt: int
    process: subprocess.Popen[bytes]
    started: float = field(default_factory=time.monotonic)
    _signalled: set[int] = field(default_factory=set)  # each process gets one SIGTERM

    @property
    def stage(self) -> str:
        """What the child is called in the progress lines and its log's name."""
        return child_name(self.stages)

    @classmethod
    def start(
        cls,
        stages: tuple[str, ...],
        root: Path,
        log: Path,
        env: dict[str, str],
        device: str | None,
        attempt: int,
        allow_missing: bool = False,
        grouped: bool = False,
    ) -> "Child":
        """Start reproducing ``stages`` in ``root``; output goes to ``log`` (appended).

        ``grouped`` runs them through the seed-group runner (:mod:`group_stage`), else
        the one stage through ``dvc repro --single-item``.
        """
        log.parent.mkdir(parents=True, exist_ok=True)
        if grouped:
            command = runner_command(stages, allow_missing)
        else:
            (stage,) = stages
            command = repro_command(stage, allow_missing)
        with open(log, "ab") as handle:
            process = subprocess.Popen(
                command,
                cwd=root,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=handle,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: see the module docstring
            )
        return cls(stages, log, device, attempt, process)

    def poll(self) -> int | None:
        """The exit status once DVC has exited, else None."""
        return self.process.poll()

    @property
    def seconds(self) -> float:
        """Wall time since the child started."""
        return time.monotonic() - self.started

    def stop(self) -> None:
        """Send SIGTERM to the stage command under DVC; DVC itself is left to end alone.

        Call it again until the group is gone: a command DVC starts after the first call
        (DVC was waiting for a lock) gets its SIGTERM on the next.
        """
        self._signal_below_dvc(signal.SIGTERM)

    def kill(self) -> None:
        """SIGKILL what runs under DVC (a stage that ignored SIGTERM); DVC then exits."""
        self._signal_below_dvc(signal.SIGKILL, again=True)

    def _signal_below_dvc(self, signum: int, again: bool = False) -> None:
        if self.process.poll() is not None:
            # DVC has exited (its command failed): what is left of the group is the stage.
            if self.process.pid in self._signalled and not again:
                return
            self._signalled.add(self.process.pid)
            try:
                os.killpg(self.process.pid, signum)
            except ProcessLookupError:
                pass
            return
        try:
            below = psutil.Process(self.process.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return
        for process in below:
            if process.pid in self._signalled and not again:
                continue
            if not _in_group(process, self.process.pid):
                continue  # a detached helper (W&B's service): its owner ends it
            self._signalled.add(process.pid)
            try:
                process.send_signal(signum)
            except psutil.NoSuchProcess:
                pass

    def group_alive(self) -> bool:
        """Whether any process of the group still runs (the stage may outlive DVC)."""
        self.process.poll()  # reap DVC itself, so a zombie does not count
        try:
            os.killpg(self.process.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def output(self) -> str:
        """Everything the child wrote so far, across attempts."""
        return self.log.read_text(errors="replace") if self.log.exists() else ""


def lost_a_lock(output: str) -> bool:
    """Whether a failed child failed on one of DVC's locks (worth retrying)."""
    return any(marker in output for marker in _LOCK_FAILURES)


def touched_outputs(output: str, stage: str) -> bool:
    """Whether DVC got as far as running ``stage``, having deleted its outputs first."""
    return f"{_RAN}{stage}'" in output or f"'{stage}' {_RESTORED}" in output


def recorded(output: str, stage: str) -> bool:
    """Whether a seed group recorded ``stage`` in dvc.lock (the group may have failed after)."""
    return f"{_RECORDED}{stage}' in dvc.lock" in output


def outcome(output: str, stage: str) -> str:
    """``ran``, ``restored`` (from DVC's run cache) or ``up to date``, as DVC reported it."""
    if f"{_RAN}{stage}'" in output:
        return "ran"
    if f"'{stage}' {_RESTORED}" in output:
        return "restored"
    return "up to date" if f"'{stage}' {_SKIPPED}" in output else "done"


def _in_group(process: psutil.Process, group: int) -> bool:
    """Whether ``process`` still belongs to the process group ``group``."""
    try:
        return os.getpgid(process.pid) == group
    except ProcessLookupError:
        return False
