"""Files written all-or-nothing, and write failures told as what they are (a full disk).

Every output a stage leaves (models, metrics, curves, checkpoints) goes through
:func:`write_atomically`: the bytes go to a uniquely named temporary file beside the
target, are fsynced, and the temporary is renamed over the target. A reader, a kill or a
second writer of the same file therefore sees the old file or a new one, whole, never a
mix; a failed write leaves the old file and no debris. Serialising first (``torch.save``
into memory) also means a full disk surfaces as Python's ``OSError`` naming the file,
not as torch's "unexpected pos" from inside its zip writer. The file gets the mode any
new file gets (0644 under the usual umask 022), not ``mkstemp``'s private 0600.
"""

import errno
import os
import secrets
from pathlib import Path

from attnlab.errors import AttnlabError


class WriteError(AttnlabError):
    """An output could not be written (a full disk, a read-only folder, a file in the way)."""


def write_atomically(path: Path, data: bytes) -> None:
    """Replace ``path`` by ``data`` all-or-nothing; create its folder if needed.

    Raises:
        WriteError: the folder or the file cannot be written; the message names the path
            and, for ``ENOSPC``, says the disk is full.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:  # a file where the folder goes, a read-only parent
        raise _write_error(Path(err.filename or path.parent), err) from None
    try:
        fd, tmp = create_temporary(path, ".tmp")
    except OSError as err:
        raise _write_error(path, err) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)  # atomic on POSIX: readers see the old file or the new
    except OSError as err:
        tmp.unlink(missing_ok=True)
        raise _write_error(path, err) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_directory(path.parent)


def create_temporary(path: Path, suffix: str) -> tuple[int, Path]:
    """Create a new, uniquely named file beside ``path``, open for writing; its fd and path.

    Like ``tempfile.mkstemp``, but with mode 0666 less the umask, so that the file renamed
    over ``path`` has an ordinary output's permissions rather than 0600. ``O_EXCL`` makes
    the name this call's alone; a name taken already is drawn again.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
    while True:
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}{suffix}")
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue


def remove_temporaries(folder: Path, name: str) -> None:
    """Delete the half-written temporaries of ``folder/name`` that a kill left behind."""
    for stale in Path(folder).glob(f".{name}.*.tmp"):
        stale.unlink(missing_ok=True)


def _write_error(path: Path, err: OSError) -> WriteError:
    if err.errno == errno.ENOSPC:
        return WriteError(f"{path}: cannot write it, the disk is full (no space left on device)")
    return WriteError(f"{path}: cannot write it ({err.strerror or err})")


def _fsync_directory(folder: Path) -> None:
    # The rename itself is durable only once the directory entry is on disk.
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
