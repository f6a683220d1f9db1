"""Files written all-or-nothing, and write failures told as what they are (a full disk).

Every output a stage leaves (models, metrics, curves, checkpoints) goes through
:func:`write_atomically`: the bytes go to a uniquely named temporary file beside the
target, are fsynced, and the temporary is renamed over the target. A reader, a kill or a
second writer of the same file therefore sees the old file or a new one, whole, never a
mix; a failed write leaves the old file and no debris. Serialising first (``torch.save``
into memory) also means a full disk surfaces as Python's ``OSError`` naming the file,
not as torch's "unexpected pos" from inside its zip writer.
"""

import errno
import os
import tempfile
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
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as err:
        raise _write_error(path, err) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)  # atomic on POSIX: readers see the old file or the new
    except OSError as err:
        Path(tmp).unlink(missing_ok=True)
        raise _write_error(path, err) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_directory(path.parent)


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
