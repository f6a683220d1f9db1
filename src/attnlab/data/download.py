"""Fetch the corpus (P0 of docs/catalogue.md) and land it only when its SHA-256 is right.

The bytes come from the canonical URL, or from a local mirror (a path or ``file://`` URL)
when the machine has no internet. Either way they are hashed while they stream into a
temporary file beside the destination, which is fsynced and renamed over the destination
only after the checksum matched: a truncated or wrong download never lands, and a
destination that existed before a failed fetch is left exactly as it was.
"""

import hashlib
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO
from urllib.parse import unquote, urlparse

from attnlab.errors import CorpusError
from attnlab.files import create_temporary

MIRROR_ENV = "ATTNLAB_CORPUS_MIRROR"
_CHUNK = 1 << 20

# HTTP statuses worth another try: the server or a proxy is briefly unwell. A 404 or 403
# will not heal by waiting, so those fail at once.
_TRANSIENT_HTTP = {408, 425, 429, 500, 502, 503, 504}


def mirror_path(mirror: str) -> Path:
    """Turn a mirror given as a plain path or a ``file://`` URL into a path."""
    if mirror.startswith("file://"):
        return Path(unquote(urlparse(mirror).path))
    return Path(mirror)


def _copy_hashing(source: BinaryIO, sink: BinaryIO | None) -> str:
    """Hash ``source`` chunk by chunk, copying each chunk to ``sink`` when one is given."""
    digest = hashlib.sha256()
    while chunk := source.read(_CHUNK):
        digest.update(chunk)
        if sink is not None:
            sink.write(chunk)
    return digest.hexdigest()


def _open_url(url: str, timeout_s: float) -> BinaryIO:
    if url.startswith("file://"):
        return mirror_path(url).open("rb")
    request = urllib.request.Request(url, headers={"User-Agent": "attnlab"})
    return urllib.request.urlopen(request, timeout=timeout_s)  # noqa: S310 (scheme checked)


def _stream_to(tmp: BinaryIO, url: str, retries: int, timeout_s: float,
               sleep: Callable[[float], None]) -> str:
    """Stream ``url`` into ``tmp``, retrying transient failures with doubling waits."""
    last_error = ""
    for attempt in range(1, retries + 1):
        tmp.seek(0)
        tmp.truncate()
        try:
            with _open_url(url, timeout_s) as response:
                return _copy_hashing(response, tmp)
        except urllib.error.HTTPError as err:
            last_error = f"HTTP {err.code} {err.reason}"
            if err.code not in _TRANSIENT_HTTP:
                break
        except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as err:
            last_error = str(getattr(err, "reason", err))
        if attempt < retries:
            sleep(2.0 ** (attempt - 1))
    raise CorpusError(
        f"could not download {url} ({retries} attempt(s)): {last_error}. "
        f"Without internet, point {MIRROR_ENV} at a local copy of the corpus, e.g. "
        f"{MIRROR_ENV}=/path/to/input.txt (a path or a file:// URL); "
        "its SHA-256 is checked all the same."
    )


def _land_atomically(tmp_path: Path, dest: Path) -> None:
    with tmp_path.open("rb") as handle:
        os.fsync(handle.fileno())
    os.replace(tmp_path, dest)
    # The rename is only durable once the directory entry itself reaches the disk.
    dir_fd = os.open(dest.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def fetch_corpus(
    url: str,
    sha256: str,
    dest: Path,
    *,
    mirror: str | None = None,
    retries: int = 4,
    timeout_s: float = 30.0,
    sleep: Callable[[float], None] = time.sleep,
) -> Path:
    """Download ``url`` (or copy ``mirror``) to ``dest``, verified against ``sha256``.

    Args:
        url: the canonical address (http, https or file).
        sha256: the expected hex digest of the bytes.
        dest: the file to write; its directory is created if needed.
        mirror: a local path or ``file://`` URL that replaces the network when given.
        retries: attempts at the network before giving up (a mirror is read once).
        timeout_s: seconds each network attempt may wait for the server.
        sleep: how to wait between attempts (1 s, then 2 s, 4 s, ...).

    Returns:
        ``dest``, now holding exactly the expected bytes.

    Raises:
        CorpusError: the source is unreachable or its bytes hash to something else;
            the message gives both digests. ``dest`` is untouched in every failure.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    source = str(mirror_path(mirror)) if mirror else url
    fd, tmp_path = create_temporary(dest, ".part")
    try:
        with os.fdopen(fd, "wb") as tmp:
            if mirror:
                try:
                    with mirror_path(mirror).open("rb") as local:
                        actual = _copy_hashing(local, tmp)
                except OSError as err:
                    raise CorpusError(f"cannot read the corpus mirror {source}: {err}") from None
            else:
                actual = _stream_to(tmp, url, retries, timeout_s, sleep)
        if actual != sha256:
            raise CorpusError(
                f"checksum mismatch for {source}: expected SHA-256 {sha256}, got {actual}. "
                "The file is truncated, corrupt or not the corpus; nothing was written."
            )
        _land_atomically(tmp_path, dest)
    finally:
        tmp_path.unlink(missing_ok=True)
    return dest


def read_corpus(path: Path, sha256: str) -> str:
    """The corpus text, once its bytes are checked against ``sha256`` (params download.sha256).

    The download stage checked the bytes when it landed them, but a stage run alone
    (``dvc repro -s tokenize``) reads whatever the workspace holds now; without this check
    an edited or corrupt corpus would be tokenized, and its token files would carry a
    hash of their own that every later check accepts.

    Raises:
        CorpusError: the file cannot be read, or its SHA-256 differs (naming the file and
            both digests).
    """
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise CorpusError(
            f"{path}: cannot read the corpus ({err.strerror or err}); run `dvc repro download`"
        ) from None
    actual = hashlib.sha256(data).hexdigest()
    if actual != sha256:
        raise CorpusError(
            f"{path}: SHA-256 {actual}, not download.sha256 {sha256}: the corpus is corrupt "
            f"or was edited; restore it with `dvc checkout {path}` or `dvc repro download`"
        )
    return data.decode("utf-8")


def sha256_of(path: Path) -> str:
    """The hex SHA-256 of a file, read in chunks."""
    with Path(path).open("rb") as handle:
        return _copy_hashing(handle, None)
