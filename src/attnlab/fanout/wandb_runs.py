"""The offline W&B runs a fan-out's stages wrote, and the one command that uploads them.

Serves every trained experiment of the catalogue under ``attnlab repro``: each training
(and each sweep trial) ends its log with where its offline run is and how to upload it,
but those lines reach only the stages' log files. The fan-out ends with one line that
counts them and gives a single ``wandb sync`` for all of them.
"""

import re
import shlex
from collections.abc import Iterable
from pathlib import Path

# attnlab.training.tracking.run_location's line for an offline run.
_OFFLINE = re.compile(r"upload it with: wandb sync (.+)$", flags=re.M)


def offline_runs(logs: Iterable[Path]) -> list[str]:
    """The offline run folders named in ``logs``, each once, in the order they appear.

    A line names its folders as a shell command (quoted: a run root may hold spaces).
    """
    folders: dict[str, None] = {}
    for log in logs:
        if log.is_file():
            for match in _OFFLINE.finditer(log.read_text(errors="replace")):
                for folder in shlex.split(match.group(1)):
                    folders.setdefault(folder)
    return list(folders)


def sync_line(folders: list[str]) -> str | None:
    """One line: how many offline runs there are and the command that uploads them all."""
    if not folders:
        return None
    command = shlex.join(["wandb", "sync", *folders])
    return f"W&B: {len(folders)} offline run(s) written; upload them all with: {command}"
