"""Several workers of one study on one machine: every CPU core, or every GPU, a worker.

Serves the sweeps of docs/catalogue.md. ``sweeps.workers`` processes share the study
through its storage (the journal file on one machine, PostgreSQL across machines) and
together finish exactly its trial count (:func:`attnlab.sweeps.study.run_study`). One
worker runs in the stage's own process and, seeded with ``seed``, makes the same trials
in the same order every time. Several run as child processes, one torch thread each on
the CPU or one GPU each; the first is seeded with ``seed`` and the others with seeds
derived from it, but which worker asks first depends on timing, so the order of trials is
no longer reproducible (the study's definition still is). A SIGTERM or SIGINT to the stage
reaches every worker once: each stops its trial at a step boundary and hands its params
back to the study, and the next run of the stage takes them up.
"""

import ctypes
import logging
import multiprocessing
import os
import signal
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from types import FrameType
from typing import Any, Literal

import numpy as np
import torch

from attnlab.config.loader import Params
from attnlab.data.tokens import read_tokens
from attnlab.errors import AttnlabError
from attnlab.fanout.resources import usable_cores
from attnlab.metrics.bpb import token_byte_lengths
from attnlab.sweeps.definition import Sweep
from attnlab.sweeps.objective import TrialObjective
from attnlab.sweeps.study import SweepError, SweepInterrupted, Tally, run_study
from attnlab.training.signals import defer_stop_signals

POLL_S = 2.0  # how often a worker waiting for a free slot looks at the study again
_INTERRUPTED = 3  # a worker's exit status when a signal stopped its trial
_PR_SET_PDEATHSIG = 1  # prctl(2): the signal a child gets when its parent dies


@dataclass(frozen=True)
class WorkerJob:
    """What one worker needs: the study, its storage, its seed and its share of the machine.

    ``device`` is the GPU the worker sees as its only one (None: the CPU, or whatever the
    parent sees when there is one worker).
    """

    params: Params
    study: str
    url: str
    seed: int
    threads: int
    device: int | None
    train_tokens: Path
    val_tokens: Path
    run_root: Path
    wandb_folder: Path
    tokenizer: Path | None = None  # its byte lengths give each trial's val/bpb


def local_workers(configured: int | Literal["auto"], environ: dict[str, str] | None = None) -> int:
    """How many workers this machine runs: ``configured``, or for ``auto`` as many as it has.

    ``auto`` is one per GPU when torch sees any, else one per CPU core. The cores are
    ``OMP_NUM_THREADS`` when a launcher set it (the fan-out gives each stage its share of
    the machine), else the cores this process is allowed to run on.
    """
    if configured != "auto":
        return configured
    if torch.cuda.is_available():
        return torch.cuda.device_count()
    return _cores(os.environ if environ is None else environ)


def _cores(environ: dict[str, str]) -> int:
    allotted = environ.get("OMP_NUM_THREADS", "")
    if allotted.isdigit() and int(allotted) > 0:
        return int(allotted)
    return usable_cores()


def worker_jobs(first: WorkerJob, count: int) -> list[WorkerJob]:
    """``count`` jobs like ``first``: seeds derived from its seed, the machine shared out.

    The first job keeps ``first.seed``, so one worker is the study's reproducible order.
    """
    if count == 1:
        return [first]
    derived = np.random.SeedSequence(first.seed).generate_state(count - 1)
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    threads = max(1, _cores(dict(os.environ)) // count) if not gpus else first.threads
    seeds = [first.seed, *(int(s) for s in derived)]
    return [
        replace(first, seed=seed, threads=threads, device=index % gpus if gpus else None)
        for index, seed in enumerate(seeds)
    ]


def run_worker(job: WorkerJob) -> Tally:
    """Run trials of ``job``'s study in this process until the study holds its trials.

    Raises:
        SweepError: ``max_failed`` trials raised.
        SweepInterrupted: a signal stopped a trial (its params wait for the next worker).
    """
    torch.set_num_threads(job.threads)
    # A stop outside a fit (between trials, or while one is set up) would otherwise kill
    # the worker with its trial still running, found only when its heartbeat goes stale.
    defer_stop_signals()
    sweep = Sweep.named(job.params, job.study)
    study = sweep.open(job.url, job.seed, job.train_tokens, job.val_tokens)
    token_bytes = token_byte_lengths(job.tokenizer, job.val_tokens) if job.tokenizer else None
    objective = TrialObjective(
        sweep,
        job.train_tokens,
        read_tokens(job.val_tokens),
        job.run_root,
        job.wandb_folder,
        token_bytes,
    )
    return run_study(study, objective, sweep.study.trials, job.params.sweeps.max_failed, POLL_S)


def run_workers(jobs: list[WorkerJob]) -> None:
    """Run ``jobs``: one in this process, several as child processes that this one watches.

    Raises:
        SweepError: a worker stopped with an error (its message is in the stage's output).
        SweepInterrupted: a signal stopped the workers; their trials wait for a rerun.
    """
    if len(jobs) == 1:
        run_worker(jobs[0])
        return
    context = multiprocessing.get_context("spawn")  # no forked torch or open storage
    children = []
    for job in jobs:
        # Set before the child starts: CUDA reads it once, when it first initialises.
        child_env = {"CUDA_VISIBLE_DEVICES": str(job.device)} if job.device is not None else {}
        child = context.Process(target=_worker_process, args=(job, child_env))
        child.start()
        children.append(child)
    stopping, previous = _forward_signals(children)
    try:
        for child in children:
            child.join()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    codes = [child.exitcode for child in children]
    if stopping or _INTERRUPTED in codes:
        raise SweepInterrupted(
            "the sweep was stopped; the trials that were running wait with their params "
            "for the next run of the stage"
        )
    failed = [f"worker {i} exited {code}" for i, code in enumerate(codes) if code != 0]
    if failed:
        raise SweepError(f"{len(failed)} of {len(jobs)} workers failed: {', '.join(failed)}")


def _forward_signals(
    children: list[multiprocessing.process.BaseProcess],
) -> tuple[list[int], dict[int, Any]]:
    """Pass SIGTERM and SIGINT on to every child, once; the signals seen, the old handlers."""
    seen: list[int] = []

    def forward(signum: int, _frame: FrameType | None) -> None:
        if not seen:
            for child in children:
                if child.pid is not None and child.is_alive():
                    os.kill(child.pid, signum)
        seen.append(signum)

    previous = {signum: signal.getsignal(signum) for signum in (signal.SIGTERM, signal.SIGINT)}
    for signum in previous:
        signal.signal(signum, forward)
    return seen, previous


def _worker_process(job: WorkerJob, env: dict[str, str]) -> None:
    """A child worker; errors end as one line and an exit status.

    It has a process group of its own, so a terminal's Ctrl-C reaches it once, through
    the parent; and it gets a SIGTERM when the parent dies, so it never runs orphaned.
    """
    os.setpgrp()
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    os.environ.update(env)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        run_worker(job)
    except SweepInterrupted as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(_INTERRUPTED)
    except AttnlabError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)
