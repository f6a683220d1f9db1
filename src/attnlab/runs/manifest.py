"""A folder's integrity record: ``manifest.json``, the SHA-256 of each file it lists.

A flipped bit of a model's weights or of ``tokenizer.json`` often still loads, to other
numbers or other merges, and a result measured on it would be recorded as real. The
stage that writes such a folder lists each file's SHA-256 last (a folder a failed write
left half done has no manifest and is refused); every reader checks the bytes first.
Nothing here imports torch: the tokenize stage checks its tokenizer with it too.
"""

import hashlib
from pathlib import Path

from attnlab.errors import AttnlabError
from attnlab.files import write_atomically
from attnlab.paths import read_metrics, write_metrics

MANIFEST = "manifest.json"


def sha256_of(data: bytes) -> str:
    """The SHA-256 of ``data`` as hex, as a manifest lists it."""
    return hashlib.sha256(data).hexdigest()


def write_listed(folder: Path, files: dict[str, bytes]) -> None:
    """Write each of ``files`` (name: bytes) into ``folder``, then their ``manifest.json``.

    Raises:
        WriteError: a file cannot be written (naming it); no manifest is written then.
    """
    folder = Path(folder)
    for name, data in files.items():
        write_atomically(folder / name, data)
    listed = [{"file": name, "sha256": sha256_of(data)} for name, data in files.items()]
    write_metrics(folder / MANIFEST, {"files": listed})


def listed_hashes(folder: Path, remedy: str) -> dict[str, str]:
    """Per file that ``folder``'s manifest lists, its SHA-256.

    Raises:
        AttnlabError: the folder has no manifest (naming it, and ``remedy``).
    """
    manifest = Path(folder) / MANIFEST
    if not manifest.is_file():
        raise AttnlabError(
            f"{folder}: no {MANIFEST} (the SHA-256 of its files) to check it against; {remedy}"
        )
    return {entry["file"]: entry["sha256"] for entry in read_metrics(manifest)["files"]}


def read_listed(
    path: Path, sha256: str | None, manifest: Path, remedy: str = "retrain the run to restore it"
) -> bytes:
    """The bytes of ``path``, once their SHA-256 is the one ``manifest`` lists for it.

    Args:
        path: The file to read.
        sha256: Its SHA-256 as the manifest lists it; None when it lists none.
        manifest: The manifest, named in the errors.
        remedy: What restores the file, said in the errors.

    Raises:
        AttnlabError: the file is missing or unlisted, or its bytes differ (naming it).
    """
    if sha256 is None:
        raise AttnlabError(f"{path}: not listed in {manifest}; {remedy}")
    try:
        data = path.read_bytes()
    except OSError:
        raise AttnlabError(f"{path}: missing (listed in {manifest}); {remedy}") from None
    if sha256_of(data) != sha256:
        raise AttnlabError(f"{path}: its SHA-256 differs from the one in {manifest}; {remedy}")
    return data
