"""Run a :class:`~attnlab.fanout.plan.StagePlan` with several stages at once.

Serves the fan-out of the whole catalogue (``attnlab repro``). The loop starts every stage
whose upstream stages have finished while a place is free, prints one line per finished
stage with the overall progress and the time left that the record's costs predict
(:mod:`~attnlab.fanout.forecast`), retries a stage that
lost a race for one of DVC's locks, and keeps running what does not depend on a failed
stage. With a time limit (:mod:`~attnlab.fanout.time_limit`) it starts only what fits
before the limit, and stops at the limit as at a signal. SIGINT or SIGTERM stops starting
stages, passes SIGTERM to every running stage's command and waits for each to save its
state and exit, so a rerun continues from the checkpoints. The outputs of every stage it
began and did not finish (stopped or failed) are then restored
(:mod:`~attnlab.fanout.restore`): the work tree is as it was found.
"""

import signal
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import TextIO

from attnlab.errors import AttnlabError
from attnlab.fanout.children import (
    Child,
    Unit,
    child_name,
    lost_a_lock,
    outcome,
    recorded,
    touched_outputs,
)
from attnlab.fanout.forecast import Forecast, clock
from attnlab.fanout.plan import StagePlan
from attnlab.fanout.resources import Resources
from attnlab.fanout.restore import restore_outputs
from attnlab.fanout.resume_points import resumable_units
from attnlab.fanout.seed_groups import launch_units, resumes_whole, runs_as_group
from attnlab.fanout.time_limit import TimeLimit
from attnlab.training.job import run_root_from_env

POLL_S = 0.2
LOCK_RETRIES = 20  # attempts of one stage that fail on a lock before it counts as failed
STOP_GRACE_S = 300  # a stopped stage gets this long to save its state before SIGKILL
LOG_FOLDER = Path(".dvc/tmp/attnlab-repro")  # git-ignored by DVC, beside DVC's own state


@dataclass
class FanOutResult:
    """What a fan-out did: stages per outcome, and whether a signal stopped it."""

    ran: list[str] = field(default_factory=list)
    up_to_date: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    stopped: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)  # not started: they did not fit the limit
    out_of_time: bool = False  # the time limit stopped the stages in ``stopped``
    signal: int | None = None
    logs: dict[str, Path] = field(default_factory=dict)  # each started stage's log

    @property
    def ok(self) -> bool:
        """Nothing failed or was interrupted; under a time limit, stages may be left."""
        stopped = bool(self.stopped) and not self.out_of_time
        return not (self.failed or self.blocked or stopped) and self.signal is None


class _Stop:
    """Turns SIGINT and SIGTERM into a flag the loop checks (restored on exit)."""

    def __init__(self) -> None:
        self.signal: int | None = None
        self._previous: dict[int, Callable | int | None] = {}

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.signal = signum

    def __enter__(self) -> "_Stop":
        for signum in (signal.SIGINT, signal.SIGTERM):
            self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)


@dataclass
class FanOut:
    """Runs one plan in one DVC workspace.

    Attributes:
        root: The DVC project.
        plan: What to run, in dependency order.
        resources: Jobs, threads per job and GPUs.
        environ: The environment children inherit (with their threads and device set).
        out: Where the progress lines go.
        allow_missing: Each stage runs as ``dvc repro --allow-missing`` (but those of
            ``plan.out_of_lock``).
        forecast: Each stage's predicted seconds, for the time left (None: not shown).
        seed_groups: Start the ready stages of one family and variant as one seed group
            (:mod:`~attnlab.fanout.seed_groups`); False starts every stage alone.
        start: What starts a unit: a local child (:meth:`Child.start`), or a SLURM job
            (:meth:`~attnlab.fanout.slurm.SlurmExecutor.start`), with the same arguments.
        limit: Start only what fits before it, stop at it (None: run the whole plan).
    """

    root: Path
    plan: StagePlan
    resources: Resources
    environ: Mapping[str, str]
    out: TextIO = sys.stdout
    allow_missing: bool = False
    forecast: Forecast | None = None
    seed_groups: bool = True
    start: Callable[..., Unit] = Child.start
    limit: TimeLimit | None = None
    _running: dict[str, Unit] = field(default_factory=dict)  # by each stage it runs
    _done: set[str] = field(default_factory=set)
    _attempts: Counter[str] = field(default_factory=Counter)
    _retry_at: dict[str, float] = field(default_factory=dict)
    _began: float = field(default_factory=time.monotonic)
    _to_restore: list[str] = field(default_factory=list)  # unfinished, outputs deleted

    def run(self) -> FanOutResult:
        """Run the plan to the end, or until a signal; never raises for a failed stage."""
        result = FanOutResult()
        self._say(
            f"{len(self.plan.order)} stages to bring up to date, {self.resources.jobs} at once, "
            f"{self.resources.threads} torch thread(s) each"
            + (f", on GPUs {','.join(self.resources.devices)}" if self.resources.devices else "")
        )
        with _Stop() as stop:
            self._loop(stop, result)
            if stop.signal is None and self.limit is not None and self.limit.reached:
                # A model is not carried to another machine: the evaluations of those
                # trained here run past the limit (seconds), everything else stops.
                result.out_of_time = True
                self._stop_all(result, "time limit", spare=self.limit.owed)
                self._loop(stop, result)
            if stop.signal is not None:
                result.signal = stop.signal
                self._stop_all(result, signal.Signals(stop.signal).name)
            # Still under _Stop: a second Ctrl-C must not cut the restore short.
            self._restore()
        result.blocked = sorted(self.plan.blocked_by(result.failed))
        gone = self._settled(result) | set(result.stopped)
        result.left = [name for name in self.plan.order if name not in gone]
        return result

    def _loop(self, stop: _Stop, result: FanOutResult) -> None:
        """Start and collect stages until none is left, a signal, or the time limit."""
        while stop.signal is None:
            self._collect(result)
            if self.limit is not None and self.limit.reached and not result.out_of_time:
                return
            self._start_ready(result)
            if not self._running and not self._waiting(result):
                return
            time.sleep(POLL_S)

    def _settled(self, result: FanOutResult) -> set[str]:
        return self._done | set(result.failed) | self.plan.blocked_by(result.failed)

    def _waiting(self, result: FanOutResult) -> bool:
        """Whether some planned stage can still start (now or after a lock retry)."""
        if self.limit is not None:  # what does not fit now never will: the time only shrinks
            ready = self.plan.ready(self._done, self._settled(result) | set(self._running))
            return any(self.limit.fits(name) for name in ready)
        return any(
            name not in self._running and name not in self._settled(result)
            for name in self.plan.order
        )

    def _children(self) -> list[Unit]:
        """Each running child once (a seed group's is listed under each of its stages)."""
        return list({id(child): child for child in self._running.values()}.values())

    def _start_ready(self, result: FanOutResult) -> None:
        settled = self._settled(result)
        now = time.monotonic()
        ready = [
            name
            for name in self.plan.ready(self._done, settled | set(self._running))
            if self._retry_at.get(name, 0.0) <= now
            and (self.limit is None or self.limit.fits(name))
        ]
        free = self.resources.jobs - len(self._children())
        if not ready or free <= 0:
            return
        resumable = resumable_units(run_root_from_env(self.environ))  # a few folders
        while free > 0 and ready:
            units = launch_units(ready, free, self.seed_groups, resumable)
            refused = False
            for unit in units:
                whole = resumes_whole(unit, resumable)
                stages = unit if self.limit is None else self.limit.admit(unit, whole)
                if stages:
                    self._launch(stages, result)
                    free -= 1
                refused = refused or not stages
            if not refused:  # a unit the limit refused leaves its place to the next one
                return
            considered = {name for unit in units for name in unit}
            ready = [name for name in ready if name not in considered]

    def _launch(self, stages: tuple[str, ...], result: FanOutResult) -> None:
        """Start ``stages`` as one child on the least busy device."""
        busy = Counter(child.device for child in self._children() if child.device)
        device = self.resources.pick_device(busy)
        attempt = max(self._attempts[name] for name in stages) + 1
        log = self.root / LOG_FOLDER / f"{child_name(stages)}.log"
        if attempt == 1:
            log.unlink(missing_ok=True)  # a previous fan-out's log
        for name in stages:
            self._attempts[name] = attempt
            result.logs[name] = log
        env = self.resources.child_environment(self.environ, device)
        grouped = runs_as_group(stages, self.seed_groups)
        # A stage whose output here is not its lock entry's runs as plain `dvc repro`.
        allow_missing = self.allow_missing and not self.plan.out_of_lock & set(stages)
        child = self.start(stages, self.root, log, env, device, attempt, allow_missing, grouped)
        for name in stages:
            self._running[name] = child

    def _collect(self, result: FanOutResult) -> None:
        for child in self._children():
            status = child.poll()
            if status is None:
                continue
            for name in child.stages:
                del self._running[name]
            output = child.output()
            if status != 0 and lost_a_lock(output) and child.attempt < LOCK_RETRIES:
                # Another DVC process held a lock: try again shortly, with a growing wait.
                retry = time.monotonic() + min(30.0, 2.0 ** (child.attempt - 1))
                self._retry_at.update(dict.fromkeys(child.stages, retry))
                continue
            if status == 0:
                for name in child.stages:
                    self._finished(name, child, output, result)
                continue
            failed = [name for name in child.stages if not recorded(output, name)]
            for name in child.stages:
                if name not in failed:
                    self._finished(name, child, output, result)
            if not failed:  # every stage was recorded before the group failed: all done
                continue
            result.failed.extend(failed)
            what = f"FAILED (exit {status}), log: {child.log}"
            self._report(child_name(tuple(failed)), what, result)
            tail = "\n".join(output.rstrip().splitlines()[-15:])
            self._say("    " + tail.replace("\n", "\n    "))
            self._to_restore += [name for name in failed if touched_outputs(output, name)]

    def _finished(self, name: str, child: Unit, output: str, result: FanOutResult) -> None:
        self._done.add(name)
        if self.limit is not None:
            self.limit.note_finished(name)
        kind = outcome(output, name)
        (result.ran if kind == "ran" else result.up_to_date).append(name)
        grouped = f" (with {len(child.stages) - 1} other seed(s))" if len(child.stages) > 1 else ""
        self._report(name, f"{kind} in {child.seconds:.1f} s{grouped}", result)

    def _report(self, name: str, what: str, result: FanOutResult) -> None:
        finished = len(self._settled(result))
        total = len(self.plan.order)
        elapsed = time.monotonic() - self._began
        line = f"[{finished}/{total}] {name}: {what} | elapsed {clock(elapsed)}"
        if finished < total and self.forecast is not None:
            settled = self._settled(result)
            unfinished = [stage for stage in self.plan.order if stage not in settled]
            running = {stage: child.seconds for stage, child in self._running.items()}
            line += f", about {clock(self.forecast.time_left(unfinished, running))} left"
        self._say(line)

    def _stop_all(
        self, result: FanOutResult, why: str, spare: Callable[[str], bool] = lambda _: False
    ) -> None:
        """Stop the running stages (not those ``spare`` keeps running), and settle them."""
        stopping = [c for c in self._children() if not all(map(spare, c.stages))]
        if not stopping:
            return
        names = [stage for child in stopping for stage in child.stages]
        # Each stage's command is sent SIGTERM whatever stopped the run: its log says so.
        self._say(f"{why}: stopping {len(names)} running stage(s) at their next step (SIGTERM)")
        deadline = time.monotonic() + STOP_GRACE_S
        while any(child.group_alive() for child in stopping):
            late = time.monotonic() > deadline
            for child in stopping:
                # Again each turn: a command DVC starts meanwhile is stopped too.
                if late:
                    child.kill()
                else:
                    child.stop()
            time.sleep(POLL_S)
        for stage in sorted(names):
            child = self._running.pop(stage)
            output = child.output()
            if child.poll() == 0 or recorded(output, stage):  # DVC (or its group) recorded it
                self._finished(stage, child, output, result)
                continue
            result.stopped.append(stage)
            if touched_outputs(output, stage):
                self._to_restore.append(stage)
        self._say("stopped; rerun the same command to continue from the checkpoints")

    def _restore(self) -> None:
        """Put back the outputs of the stages begun and not finished, saying from where."""
        if not self._to_restore:
            return
        self._say(
            f"restoring the outputs of {len(self._to_restore)} unfinished stage(s), "
            f"{', '.join(self._to_restore)} (DVC deletes them before it runs a stage):"
        )
        try:
            restored = restore_outputs(self.root, self._to_restore)
        except AttnlabError as err:  # said, and the run's own outcome still decides the exit
            self._say(f"  error: {err}")
            return
        for line in restored.lines():
            self._say(f"  {line}")

    def _say(self, line: str) -> None:
        print(line, file=self.out, flush=True)
