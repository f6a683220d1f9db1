"""One fan-out at a time in a project, as DVC allows one ``dvc repro`` at a time.

Serves the fan-out of the whole catalogue (``attnlab repro``). Two fan-outs in one work
tree would plan the same stages, overwrite each other's per-stage logs and params, and
report each other's failures; a second one is refused instead, naming the first one's
process. The lock is DVC's own kind (``zc.lockfile``, an OS lock on a file holding the
holder's pid): the OS releases it when its holder dies, so a killed fan-out leaves no
stale lock behind.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import zc.lockfile

from attnlab.errors import AttnlabError

LOCK_FILE = Path(".dvc/tmp/attnlab-repro.lock")  # beside DVC's own lock, git-ignored


@contextmanager
def only_fan_out(root: Path) -> Iterator[None]:
    """Hold the project's fan-out lock for the body.

    Raises:
        AttnlabError: another ``attnlab repro`` runs in ``root`` (its pid is named).
    """
    path = root / LOCK_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        lock = zc.lockfile.LockFile(str(path))
    except zc.lockfile.LockError:
        holder = path.read_text(errors="replace").strip() or "unknown"
        raise AttnlabError(
            f"another attnlab repro (pid {holder}) is running in {root}; "
            "wait for it to end, or stop it (Ctrl-C, or kill -INT "
            f"{holder}), then rerun"
        ) from None
    try:
        yield
    finally:
        lock.close()
