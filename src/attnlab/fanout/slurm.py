"""The fan-out's units as SLURM jobs: ``attnlab repro --executor slurm``.

Every unit the fan-out would start as a local child (a seed group, a lone stage, a sweep
with its workers) is submitted with ``sbatch`` instead; the launcher plans, waits, reports
and restores exactly as for local children, through the same interface
(:class:`SlurmJob` answers what :class:`~attnlab.fanout.children.Child` answers). The job
runs :mod:`~attnlab.fanout.slurm_job`, which starts the same child inside the allocation.
The workspace (the project, DVC's cache, ``ATTNLAB_RUN_ROOT``'s checkpoints, the logs) must
be on a filesystem every node shares, as a cluster's home or project folder is: the
launcher reads each job's log and DVC records each stage in the one ``dvc.lock``.

Plain ``sbatch``, ``scontrol`` and ``scancel``, not submitit or dask-jobqueue: the unit
already is a command (DVC, or the seed-group runner), so no Python callable needs
pickling to the node, and the parts this needs (``--signal`` to the batch shell,
``--requeue`` with a log opened for appending, a release of the requeued job) are
sbatch options either library would have to be told anyway. One ``scontrol show job``
per poll reads the state of every job at once.

What each job asks for comes from ``runtime.slurm`` (:class:`~attnlab.config.slurm.SlurmParams`):
CPUs (also its stages' torch threads), memory, a GPU through ``--gres`` for the units that
train or measure a model, and a ``--time`` from the fan-out's forecast with a margin.
Before the limit SLURM sends SIGUSR1 (``--signal=B:USR1@...``): the stage stops at its next
step with its checkpoint and the job requeues itself; the rerun resumes bit for bit.
"""

import re
import shlex
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from attnlab.config.slurm import SlurmParams
from attnlab.errors import AttnlabError
from attnlab.fanout.children import child_name
from attnlab.fanout.forecast import Forecast

# Job states after which nothing of the job runs any more (squeue's long names).
ENDED = {
    "BOOT_FAIL",
    "CANCELLED",
    "COMPLETED",
    "DEADLINE",
    "FAILED",
    "NODE_FAIL",
    "OUT_OF_MEMORY",
    "PREEMPTED",
    "TIMEOUT",
}
# The stage families that train or measure a model: only their jobs ask for the gres.
MODEL_FAMILIES = ("train", "evaluate", "sweep", "winograd-train", "winograd-score", "probes")
START_UP_S = 300  # beside the forecast: the job's imports, DVC's reads, a slow node
STATE_EVERY_S = 1.0  # the queue is asked at most this often, for all jobs at once
UNREACHABLE_S = 120  # a controller silent this long fails the run
JOB_PREFIX = "attnlab:"
# slurm_job's lines: the job's status (for a job the controller has forgotten), a run's
# start, and a requeue it asked for, which SLURM may show as an ended run for a moment.
EXIT_LINE = re.compile(r"^attnlab: job exits (\d+)$", re.M)
STARTED_LINE = re.compile(r"^attnlab: job \d+ started at ", re.M)
REQUEUE_LINE = "requeueing job"
REQUEUE_GRACE_S = 60.0


def slurm_command(*args: str, check: bool = True) -> str:
    """Run a SLURM client command; its output.

    The command gets a session of its own: a Ctrl-C in the launcher's terminal must not
    cut an ``scancel`` short. With ``check`` off a refusal is no error: a job that ended
    between a read of the queue and its ``scancel`` needs none.

    Raises:
        AttnlabError: the command is missing or fails (its message named).
    """
    try:
        done = subprocess.run(
            list(args), capture_output=True, text=True, start_new_session=True, timeout=120
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        raise AttnlabError(f"{args[0]}: {err}") from err
    if check and done.returncode != 0:
        raise AttnlabError(f"{' '.join(args[:2])}: {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout


def wants_model_device(stages: Sequence[str]) -> bool:
    """Whether a unit trains or measures a model (``train@...``, ``winograd-score@...``)."""
    return any(name.split("@")[0].removesuffix("-extra") in MODEL_FAMILIES for name in stages)


def time_limit_minutes(seconds: float, settings: SlurmParams) -> int:
    """A job's ``--time`` in minutes: ``seconds`` (forecast) with margin and start-up, capped."""
    minutes = -(-(seconds * settings.time_margin + START_UP_S) // 60)
    minutes = max(int(minutes), settings.min_time_minutes)
    return min(minutes, settings.max_time_minutes or minutes)


@dataclass
class JobState:
    """One job as ``scontrol show job`` reports it."""

    state: str
    reason: str
    restarts: int
    exit_code: int


def parse_jobs(text: str) -> dict[str, JobState]:
    """``scontrol show job --oneliner``'s lines, by job id."""
    jobs = {}
    for line in text.splitlines():
        fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
        if "JobId" not in fields:
            continue
        status, _, by_signal = fields.get("ExitCode", "0:0").partition(":")
        code = int(status) or (128 + int(by_signal) if by_signal and int(by_signal) else 0)
        jobs[fields["JobId"]] = JobState(
            fields.get("JobState", "UNKNOWN"),
            fields.get("Reason", "None"),
            int(fields.get("Restarts", "0")),
            code,
        )
    return jobs


@dataclass
class SlurmQueue:
    """The state of this fan-out's jobs, read with one ``scontrol`` call per poll."""

    _read_at: float = 0.0
    _jobs: dict[str, JobState] = field(default_factory=dict)

    def state(self, job_id: str, submitted: float) -> JobState | None:
        """The job's state now (at most :data:`STATE_EVERY_S` old); None once forgotten.

        Args:
            job_id: SLURM's id.
            submitted: When the job was submitted (``time.monotonic()``): a read from
                before then is read again, since it cannot know the job.
        """
        now = time.monotonic()
        if now - self._read_at >= STATE_EVERY_S or self._read_at < submitted:
            try:
                self._jobs = parse_jobs(slurm_command("scontrol", "show", "job", "--oneliner"))
                self._read_at = now
            except AttnlabError:
                # The controller may be restarting: the last reading stands a while.
                if now - self._read_at > UNREACHABLE_S or self._read_at < submitted:
                    raise
        return self._jobs.get(job_id)

    def forget(self) -> None:
        """Read the queue again on the next question (after a cancel or a release)."""
        self._read_at = 0.0


@dataclass
class SlurmJob:
    """A submitted unit, answering the launcher as a local child does.

    Attributes:
        stages: The stages it reproduces (a seed group's, or one).
        log: The job's output (SLURM's and its stages', appended across requeues).
        job_id: SLURM's id.
        queue: Where its state is read.
        attempt: 1 for the first submission, more after lock retries.
        submitted: The wall clock (epoch s) of the submission, for the start-up figure.
    """

    stages: tuple[str, ...]
    log: Path
    job_id: str
    queue: SlurmQueue
    attempt: int
    submitted: float = field(default_factory=time.time)
    device: str | None = None  # SLURM gives the GPU: the launcher assigns none
    started: float = field(default_factory=time.monotonic)
    _status: int | None = None
    _signalled: bool = False
    _requeue_seen: tuple[int, float] = (0, 0.0)  # (runs so far, when seen ended requeueing)

    def poll(self) -> int | None:
        """The job's exit status once it has ended, else None.

        A job requeued at its time limit waits for the begin time SLURM gives every
        requeued job (two minutes): its state is saved, so it is released at once.
        """
        if self._status is not None:
            return self._status
        state = self.queue.state(self.job_id, self.started)
        if state is None:  # aged out of the controller: the job's own last line says
            said = EXIT_LINE.findall(self.output())
            self._status = int(said[-1]) if said else 1
        elif state.state in ENDED and self._requeueing():
            pass  # SLURM has the run ended, and the job pending again, in a moment
        elif state.state in ENDED:
            self._status = 0 if state.state == "COMPLETED" else state.exit_code or 1
            if self._status:
                with open(self.log, "a") as handle:
                    print(f"SLURM: job {self.job_id} {state.state} ({state.reason})", file=handle)
        elif state.state == "PENDING" and state.restarts and state.reason == "BeginTime":
            slurm_command(
                "scontrol", "update", f"JobId={self.job_id}", "StartTime=now", check=False
            )
            self.queue.forget()
        return self._status

    def _requeueing(self) -> bool:
        """Whether the job's last word is that it requeues itself (a state yet to come)."""
        runs = STARTED_LINE.split(self.output())
        if REQUEUE_LINE not in runs[-1]:
            return False
        # The grace counts from the first sight of this run's end (a later run starts
        # with its own line, and may requeue itself in turn).
        if self._requeue_seen[0] != len(runs):
            self._requeue_seen = (len(runs), time.monotonic())
        return time.monotonic() - self._requeue_seen[1] < REQUEUE_GRACE_S

    @property
    def seconds(self) -> float:
        """Wall time since submission (in the queue and running)."""
        return time.monotonic() - self.started

    def stop(self) -> None:
        """Stop the job: a pending one is cancelled, a running one's stage saves and exits.

        A running job's batch process gets SIGTERM (:mod:`~attnlab.fanout.slurm_job`
        passes it to the stage command, which saves its checkpoint; no requeue).
        """
        state = self.queue.state(self.job_id, self.started)
        if state is None or state.state in ENDED:
            return
        if state.state == "PENDING":
            slurm_command("scancel", self.job_id, check=False)
            self.queue.forget()
        elif not self._signalled:
            slurm_command("scancel", "--batch", "--signal=TERM", self.job_id, check=False)
            self._signalled = True

    def kill(self) -> None:
        """Cancel the job outright (SLURM's SIGTERM, then SIGKILL after its KillWait)."""
        slurm_command("scancel", self.job_id, check=False)
        self.queue.forget()

    def group_alive(self) -> bool:
        """Whether the job still holds its allocation (or waits for one)."""
        state = self.queue.state(self.job_id, self.started)
        return state is not None and state.state not in ENDED

    def output(self) -> str:
        """Everything the job wrote so far, across requeues."""
        return self.log.read_text(errors="replace") if self.log.exists() else ""


@dataclass
class SlurmExecutor:
    """Submits the fan-out's units with ``sbatch`` (the launcher's ``start``).

    Attributes:
        settings: ``runtime.slurm``.
        forecast: Each stage's predicted seconds (None: ``min_time_minutes``).
    """

    settings: SlurmParams
    forecast: Forecast | None = None
    queue: SlurmQueue = field(default_factory=SlurmQueue)
    submitted: list[str] = field(default_factory=list)  # every job id, for cancel_all

    def cancel_all(self) -> None:
        """Cancel every job submitted (the launcher failed: no job may outlive it)."""
        if self.submitted:
            slurm_command("scancel", *self.submitted, check=False)

    def sbatch_options(self, stages: Sequence[str], log: Path, root: Path) -> list[str]:
        """The options of the job for ``stages``: its name, log, request and signals."""
        s = self.settings
        seconds = (
            sum(self.forecast.seconds.get(name, 0.0) for name in stages) if self.forecast else 0
        )
        options = [
            "--parsable",
            f"--job-name={JOB_PREFIX}{child_name(tuple(stages))}",
            f"--chdir={root}",
            f"--output={log}",
            "--open-mode=append",  # a requeued run adds to its log
            "--export=ALL",
            "--nodes=1",
            "--ntasks=1",
            f"--cpus-per-task={s.cpus_per_job}",
            f"--mem={s.mem_per_job}",
            f"--time={time_limit_minutes(seconds, s)}",
            f"--signal=B:USR1@{s.signal_before_s}",
            "--requeue",
        ]
        options += [f"--partition={s.partition}"] if s.partition else []
        options += [f"--account={s.account}"] if s.account else []
        options += [f"--gres={s.gres}"] if s.gres and wants_model_device(stages) else []
        return options + list(s.extra_options)

    def start(
        self,
        stages: tuple[str, ...],
        root: Path,
        log: Path,
        env: Mapping[str, str],
        device: str | None,
        attempt: int,
        allow_missing: bool = False,
        grouped: bool = False,
    ) -> SlurmJob:
        """Submit ``stages`` as one job; as :meth:`Child.start` for a local child."""
        log.parent.mkdir(parents=True, exist_ok=True)
        flags = ["--allow-missing"] * allow_missing + ["--group"] * grouped
        inside = [sys.executable, "-m", "attnlab.fanout.slurm_job", "--log", str(log), *flags]
        inside += stages
        command = [
            "sbatch",
            *self.sbatch_options(stages, log, root),
            "--wrap",
            "exec " + shlex.join(inside),  # USR1 reaches python
        ]
        submitted = time.time()
        done = subprocess.run(
            command, env=dict(env), capture_output=True, text=True, start_new_session=True
        )
        if done.returncode != 0:
            raise AttnlabError(f"sbatch refused {child_name(stages)}: {done.stderr.strip()}")
        job_id = done.stdout.strip().split(";")[0]
        self.submitted.append(job_id)
        with open(log, "a") as handle:  # the job's own first line says when it started
            print(f"attnlab: submitted at {submitted:.3f} as SLURM job {job_id}", file=handle)
        return SlurmJob(stages, log, job_id, self.queue, attempt, submitted)


def settings_of(root: Path) -> SlurmParams:
    """``runtime.slurm`` of the project at ``root`` (params validated as every stage's)."""
    from attnlab.config import load_params

    return load_params(root / "params.yaml").runtime.slurm
