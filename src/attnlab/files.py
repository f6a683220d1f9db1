"""Files written all-or-nothing, and write failures told as what they are (a full disk).

Every output a stage leaves (models, metrics, curves, checkpoints) goes through
:func:`write_atomically`: the bytes go to a uniquely named temporary file beside the
target, are fsynced, and the temporary is renamed over the target. A reader, a kill or a
second writer of the same file therefore sees the old file or a new one, whole, never a
mix; a failed write leaves the old file and no debris. Serialising first (``torch.save``
into memory) also means a full disk surfaces as Python's ``OSError`` naming the file,
not as torch's "unexpected pos" from inside its zip writer. The file gets the mode any
new file gets (0644 under the usual umask 022), not ``mkstemp``'s private 0600.
Outputs that are read as one set (the report's pages and its summary folder) go through
:func:`write_together`: all written first, then all renamed into place.
"""

import errno
import os
import secrets
import shutil
from collections.abc import Mapping
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
    tmp = _staged_file(path, data)
    try:
        os.replace(tmp, path)  # atomic on POSIX: readers see the old file or the new
    except OSError as err:
        tmp.unlink(missing_ok=True)
        raise _write_error(path, err) from None
    _fsync_directory(path.parent)


def write_together(
    files: Mapping[Path, bytes], folders: Mapping[Path, Mapping[str, bytes]]
) -> None:
    """Replace every file of ``files`` and every folder of ``folders``, as one set.

    Everything is written first, each file to a temporary beside its target and each
    folder's files into a new folder beside it, where a full disk or a kill leaves the old
    set as it was (and no debris, but for a kill); then the new ones are renamed over the
    old in one pass of renames, with nothing left to write. A folder's old files go, so a
    file no longer written does not linger.

    Args:
        files: Each file's path and its new bytes.
        folders: Each folder's path and, by name, the files it is to hold (and no other).

    Raises:
        WriteError: a file or folder cannot be written (naming it); nothing was replaced.
    """
    staged: dict[Path, Path] = {}
    try:
        for folder, contents in folders.items():
            staged[Path(folder)] = _staged_folder(Path(folder), contents)
        for path, data in files.items():
            staged[Path(path)] = _staged_file(Path(path), data)
    except BaseException:
        for temporary in staged.values():
            _remove(temporary)
        raise
    replaced = []
    for target, temporary in staged.items():
        if temporary.is_dir() and target.is_dir():
            old = target.with_name(f".{target.name}.{secrets.token_hex(4)}.old")
            target.rename(old)
            replaced.append(old)
        os.replace(temporary, target)
    for old in replaced:
        shutil.rmtree(old)
    for parent in {target.parent for target in staged}:
        _fsync_directory(parent)


def _staged_file(path: Path, data: bytes) -> Path:
    """``data`` written and synced to a new temporary beside ``path``; its path."""
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
    except BaseException as err:
        tmp.unlink(missing_ok=True)
        if isinstance(err, OSError):
            raise _write_error(path, err) from None
        raise
    return tmp


def _staged_folder(folder: Path, contents: Mapping[str, bytes]) -> Path:
    """A new folder beside ``folder`` holding ``contents``; its path."""
    staging = folder.with_name(f".{folder.name}.{secrets.token_hex(4)}.tmp")
    try:
        staging.mkdir(parents=True)
    except OSError as err:
        raise _write_error(folder, err) from None
    try:
        for name, data in contents.items():
            os.replace(_staged_file(staging / name, data), staging / name)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return staging


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


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
