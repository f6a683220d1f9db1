"""One trainer per configuration: an exclusive lock on a run's checkpoint folder.

Serves every trained experiment of docs/catalogue.md. A ``dvc repro`` killed with SIGKILL
leaves its stage running as an orphan; rerun at once, a second trainer of the same
configuration would resume from the same folder, and both would write the same outputs.
The lock is an ``flock`` on ``<folder>.lock``, beside the folder: the kernel drops it when
its holder exits, however it dies, so a lock is never stale. The file names its holder
(host, pid, start time), so the refusal can say whom to wait for or stop.

The holder deletes the file before letting go; a process that was waiting on the deleted
file notices (its inode is no longer the path's) and locks the new one instead.
"""

import fcntl
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from attnlab.errors import AttnlabError


class RunLocked(AttnlabError):
    """Another live process trains (or writes the outputs of) this configuration."""


def lock_path(folder: Path) -> Path:
    """``<folder>.lock``: beside the run's folder, which is deleted while the lock is held."""
    return folder.with_name(folder.name + ".lock")


@contextmanager
def exclusive_run(folder: Path) -> Iterator[None]:
    """Hold the lock of ``folder`` for the block, or refuse at once.

    Raises:
        RunLocked: another process holds it; the message names that process.
    """
    path = lock_path(folder)
    handle = _acquire(path)
    try:
        yield
    finally:
        path.unlink(missing_ok=True)  # while still held: nobody can lock it in between
        handle.close()


def try_exclusive_run(folder: Path) -> bool:
    """Whether ``folder``'s lock is free right now (taking and releasing it at once)."""
    try:
        with exclusive_run(folder):
            return True
    except RunLocked:
        return False


def _acquire(path: Path) -> BinaryIO:
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        handle = open(path, "a+b")  # held open for the lock's lifetime
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = path.read_text(encoding="utf-8", errors="replace").strip()
            handle.close()
            raise RunLocked(
                f"{path.with_suffix('')}: another trainer of this configuration is running "
                f"({holder or 'holder unknown'}); wait for it to end or stop it, then rerun"
            ) from None
        if _same_file(handle, path):
            break
        handle.close()  # the holder deleted the file as we locked it: lock the new one
    handle.truncate(0)
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime())
    handle.write(f"pid {os.getpid()} on {socket.gethostname()}, since {started}".encode())
    handle.flush()
    return handle


def _same_file(handle: BinaryIO, path: Path) -> bool:
    try:
        return os.fstat(handle.fileno()).st_ino == os.stat(path).st_ino
    except FileNotFoundError:
        return False
