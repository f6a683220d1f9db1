"""Weights & Biases runs that can never hang, prompt, leak or fail a training stage.

Every trained variant of docs/catalogue.md is one W&B run, laid out the way W&B compares
runs: named ``<dvc experiment or commit>/<variant>/seed-<seed>``; grouped with the runs
that are replicas of one configuration (same model, recipe and steps; another seed or
device count), so W&B's grouped line is the mean and spread of a variant's seeds, never a
mix of models; tagged with the story's experiment, the variant and ``seed-<seed>``, the
seeds in the run's config; the baseline commit recorded clean (``dvc exp run``
edits params.yaml before training, so ``git describe --dirty`` always said dirty). After
each run one line says its id, where it is and how to upload it. The traps of PITFALLS 4
and 5 are handled here:

- The mode is settled *before* ``wandb.init``: ``WANDB_MODE`` when set, else online only
  with an API key (``WANDB_API_KEY`` or a netrc entry), else offline. No login prompt,
  no network wait; ``wandb sync`` uploads an offline run later.
- The run is created here and handed to Lightning's ``WandbLogger(experiment=run)``,
  which never finishes runs and would silently reuse a live one; :func:`finish_run`
  always finishes it, with exit code 1 when training raised.
- A training resumed from its checkpoint continues its own W&B run: the run's id is kept
  beside the checkpoint (:func:`run_id`) and ``wandb.init`` resumes it. An offline
  segment records that it resumes, so one ``wandb sync`` of the segments uploads them, in
  order, as one run. Any other start is a new run.
- Any W&B failure is a warning: the DVC metrics are the record, W&B a mirror.
"""

import hashlib
import json
import logging
import netrc
import os
import secrets
import shlex
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import wandb

from attnlab.config.training import WandbParams
from attnlab.files import remove_temporaries, write_atomically
from attnlab.paths import seed_label

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.wandb.ai"
PIPELINE_WRITES = ("--", ".", ":!dvc.lock", ":!reports")
RUN_ID = "wandb-run-id"  # beside the checkpoint: the W&B run that a resume continues


def has_api_key() -> bool:
    """Whether W&B could log in without asking: an env key or a netrc entry for its host."""
    if os.environ.get("WANDB_API_KEY"):
        return True
    host = urlparse(os.environ.get("WANDB_BASE_URL", DEFAULT_BASE_URL)).hostname
    path = os.environ.get("NETRC") or Path.home() / ".netrc"
    try:
        return host is not None and netrc.netrc(path).authenticators(host) is not None
    except (OSError, netrc.NetrcParseError):
        return False


def resolve_mode() -> str:
    """``WANDB_MODE`` when set (``dryrun`` means offline), else online iff a key exists."""
    mode = os.environ.get("WANDB_MODE", "").strip().lower()
    if mode == "dryrun":
        return "offline"
    if mode in ("online", "offline", "disabled", "shared"):
        return mode
    return "online" if has_api_key() else "offline"


def _git(folder: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args], cwd=folder, capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() or None


def git_revision(folder: Path) -> dict[str, Any]:
    """The baseline commit and whether the checkout differs from it.

    Under ``dvc exp run`` the baseline is DVC's (``DVC_EXP_BASELINE_REV``) and the
    checkout differs by the experiment's params. What ``dvc repro`` itself writes
    (``dvc.lock``, ``reports/``) does not count as a difference.
    """
    commit = os.environ.get("DVC_EXP_BASELINE_REV") or _git(folder, "rev-parse", "HEAD")
    # The pipeline's own writes (the lock, the committed record) are not a change of code.
    status = _git(folder, "status", "--porcelain", "--untracked-files=no", *PIPELINE_WRITES)
    return {"git_commit": commit, "git_dirty": bool(status)}


def run_name(variant: str, seed: int, commit: str | None) -> str:
    """``<dvc experiment>/<variant>/seed-<seed>``, else ``<short commit>/<variant>/seed-<seed>``.

    DVC sets DVC_EXP_NAME during ``dvc exp run``; outside it the commit names the code.
    """
    prefix = os.environ.get("DVC_EXP_NAME") or (commit[:8] if commit else "workspace")
    return f"{prefix}/{variant}/{seed_label(seed)}"


def replica_group(variant: str, config: dict[str, Any]) -> str:
    """``<variant>-<hash>`` of everything but the seeds and the devices: one configuration.

    A recipe that pins ``init_seed`` or ``data_seed`` is another configuration (its
    ``train`` differs), so its runs form a group of their own.

    Args:
        variant: The variant's name (readable part of the group).
        config: The resolved configuration, as :meth:`TrainJob.config` returns it.
    """
    same = {key: config[key] for key in ("model", "train", "steps", "warmup_steps")}
    digest = hashlib.sha256(json.dumps(same, sort_keys=True).encode()).hexdigest()[:8]
    return f"{variant}-{digest}"


def run_id(state: Path, resuming: bool) -> str:
    """The W&B run id of the training whose resume state is the folder ``state``.

    A training that resumes from a checkpoint in ``state`` continues the run that wrote
    it: the id kept there. Any other start (no checkpoint yet, resume off) is a new run,
    whose new id is kept there for the next resume. ``state`` is the configuration's own
    folder (named after its fingerprint), so another configuration is always another run,
    and the id goes with the checkpoint when a finished run's state is discarded.
    """
    path = state / RUN_ID
    if resuming and path.exists():
        kept = path.read_text().strip()
        if kept.isalnum():  # a damaged file makes a new run, not a failed init
            return kept
    new = secrets.token_hex(6)
    remove_temporaries(state, RUN_ID)  # left by a kill during an earlier write
    write_atomically(path, new.encode())
    return new


def start_run(
    cfg: WandbParams,
    name: str,
    group: str,
    tags: list[str],
    config: dict[str, Any],
    folder: Path,
    state: Path,
    resuming: bool,
) -> Any | None:
    """Start or resume the W&B run, or return None (with a warning) if W&B cannot start.

    Args:
        cfg: Project, entity and init timeout.
        name: The run's display name.
        group: The runs that are replicas of this one (:func:`replica_group`).
        tags: The story's experiment, the variant, the seed, and e.g. the study.
        config: The resolved configuration to record.
        folder: The parent of W&B's ``wandb/`` folder; outside DVC's temporary workspaces.
        state: The training's resume folder, where its run id is kept (:func:`run_id`).
        resuming: Training resumes from a checkpoint in ``state``: continue its run.
    """
    mode = resolve_mode()
    if mode == "disabled":
        return None
    run = None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        run = wandb.init(
            id=run_id(state, resuming),
            # "allow", not "must": a run that was offline is not on the server yet.
            resume="allow" if resuming else None,
            project=cfg.project,
            entity=cfg.entity,
            name=name,
            group=group,
            tags=tags,
            job_type="train",
            config=config,
            dir=str(folder),
            mode=mode,
            # A run object of its own, never a live one from earlier in the process.
            reinit="create_new",
            settings=wandb.Settings(
                init_timeout=cfg.init_timeout_s,
                console="off",  # our progress bar owns the terminal
                silent=True,  # finish_run says where the run is, in one line
            ),
        )
        # Curves are plotted against the optimiser step, as Lightning's own logger does.
        run.define_metric("trainer/global_step")
        run.define_metric("*", step_metric="trainer/global_step", step_sync=True)
        return run
    except Exception as err:  # W&B must never fail a stage
        log.warning(
            "W&B could not start (%s: %s); training continues without it",
            type(err).__name__,
            err,
        )
        finish_run(run, None, exit_code=1)  # a run that started must not stay open
        return None


def run_location(run: Any) -> str:
    """One line: the run's id, where it is, and how to upload it when it is offline.

    A resumed offline run has a folder per process that trained it; the command names
    them all, so that they upload together, as one run.
    """
    if run.settings.mode == "online" and run.url:
        return f"W&B run {run.id}: {run.url}"
    folder = Path(run.settings.sync_dir)
    segments = sorted(folder.parent.glob(f"offline-run-*-{run.id}")) or [folder]
    upload = shlex.join(["wandb", "sync", *map(str, segments)])  # a run root may hold spaces
    return f"W&B run {run.id} (offline) in {folder}; upload it with: {upload}"


def finish_run(run: Any | None, summary: dict[str, Any] | None, exit_code: int) -> None:
    """Write the summary, finish the run and say where it is; failures are warnings."""
    if run is None:
        return
    try:
        if summary:
            run.summary.update(summary)
        where = run_location(run)
        run.finish(exit_code=exit_code)
        log.info(where)
    except Exception as err:
        log.warning("W&B could not finish run %s (%s: %s)", run.id, type(err).__name__, err)
