"""Weights & Biases runs that can never hang, prompt, leak or fail a training stage.

Every trained variant of EXPERIMENTS.md is one W&B run, named ``<experiment>/<variant>``
(the DVC experiment, or ``workspace``) and grouped by the story's experiment. The traps
of PITFALLS 4 and 5 are handled here:

- The mode is settled *before* ``wandb.init``: ``WANDB_MODE`` when set, else online only
  with an API key (``WANDB_API_KEY`` or a netrc entry), else offline. No login prompt,
  no network wait; ``wandb sync`` uploads an offline run later.
- The run is created here and handed to Lightning's ``WandbLogger(experiment=run)``,
  which never finishes runs and would silently reuse a live one; :func:`finish_run`
  always finishes it, with exit code 1 when training raised.
- Any W&B failure is a warning: the DVC metrics are the record, W&B a mirror.
"""

import logging
import netrc
import os
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import wandb

from attnlab.config.training import WandbParams

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.wandb.ai"


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


def run_name(variant: str) -> str:
    """``<dvc experiment>/<variant>``; DVC sets DVC_EXP_NAME during ``dvc exp run``."""
    return f"{os.environ.get('DVC_EXP_NAME') or 'workspace'}/{variant}"


def git_revision(folder: Path) -> str | None:
    """The commit checked out at ``folder`` (with ``-dirty`` if files changed), or None."""
    try:
        done = subprocess.run(
            ["git", "describe", "--always", "--dirty", "--abbrev=40"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() or None


def start_run(
    cfg: WandbParams, name: str, group: str, config: dict[str, Any], folder: Path
) -> Any | None:
    """Start a new W&B run, or return None (with a warning) if W&B cannot start.

    Args:
        cfg: Project, entity and init timeout.
        name: The run's display name.
        group: The experiment the run belongs to.
        config: The resolved configuration to record.
        folder: The parent of W&B's ``wandb/`` folder; outside DVC's temporary workspaces.
    """
    mode = resolve_mode()
    if mode == "disabled":
        return None
    run = None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        run = wandb.init(
            project=cfg.project,
            entity=cfg.entity,
            name=name,
            group=group,
            job_type="train",
            config=config,
            dir=str(folder),
            mode=mode,
            # A new run every time, never a live one from earlier in the process.
            reinit="create_new",
            settings=wandb.Settings(
                init_timeout=cfg.init_timeout_s,
                console="off",  # our progress bar owns the terminal
                silent=True,
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


def finish_run(run: Any | None, summary: dict[str, Any] | None, exit_code: int) -> None:
    """Write the summary and finish the run; failures are warnings, never errors."""
    if run is None:
        return
    try:
        if summary:
            run.summary.update(summary)
        run.finish(exit_code=exit_code)
    except Exception as err:
        log.warning("W&B could not finish run %s (%s: %s)", run.id, type(err).__name__, err)
