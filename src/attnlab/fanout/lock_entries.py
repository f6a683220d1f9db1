"""Write stages' ``dvc.lock`` entries as DVC writes them, without reparsing the whole file.

DVC records a stage by loading the whole ``dvc.lock`` with ruamel's comment-preserving
loader, updating the stage's entry and dumping the whole file again
(``Lockfile.dump_stages``). That loader and dumper are pure Python: on the catalogue's
lock file (about 300 entries, 850 kB) one write takes about 9 s, more than a quick-pass
stage's training. DVC writes every entry with the same dumper at the same indentation, so
the file is a ``stages:`` mapping of blocks, one per stage, each starting at a line
indented by two spaces. :func:`write_lock_entries` renders each new entry with DVC's own
serializer and dumper and puts it in place of the old block (or after the last one, where
DVC's update puts a new key): the text DVC would write, for the cost of the new entries.

A file of any other shape (another top-level key after ``stages``, a quoted stage name)
is left to DVC's own ``dump_stages``.
"""

import contextlib
import io
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

_STAGES = "stages:\n"
# A stage's block starts at a key indented by exactly two spaces: an unquoted name.
_BLOCK_START = re.compile(r"^  (?P<name>[^\s'\"-][^\n]*):$", re.MULTILINE)


def _rendered(entry: dict[str, Any]) -> str:
    """``entry`` (``{name: data}``) as DVC's dumper writes it under ``stages:``."""
    from dvc.utils.serialize._yaml import _get_yaml

    out = io.StringIO()
    _get_yaml().dump({"stages": entry}, out)
    text = out.getvalue()
    if not text.startswith(_STAGES):
        raise ValueError("DVC's dumper did not write a stages mapping")
    return text[len(_STAGES) :]


def split_blocks(text: str) -> tuple[str, dict[str, str]] | None:
    """The file's text before its stage blocks, and each stage's block by name.

    None when the file is not DVC's plain ``schema`` + ``stages`` shape.
    """
    head, separator, body = text.partition("\n" + _STAGES)
    if not separator or re.search(r"^\S", body, re.MULTILINE):
        return None  # no stages yet, or another top-level key follows them
    starts = list(_BLOCK_START.finditer(body))
    if not starts or starts[0].start() != 0:
        return None
    blocks = {}
    for match, after in zip(starts, [*starts[1:], None], strict=True):
        end = after.start() if after else len(body)
        blocks[match["name"]] = body[match.start() : end]
    return head + "\n" + _STAGES, blocks


def _written_in_place(lockfile: Any, stages: Sequence[Any]) -> bool:
    """Write ``stages``' entries into ``lockfile`` (DVC's ``Lockfile``) as DVC would.

    False, having written nothing, when the file is absent or not of DVC's plain shape.
    """
    from dvc.stage import serialize

    path = Path(lockfile.path)
    parsed = split_blocks(path.read_text(encoding="utf-8")) if path.exists() else None
    if parsed is None:
        return False
    head, blocks = parsed
    modified = False
    for stage in stages:
        block = _rendered(serialize.to_lockfile(stage))
        modified |= blocks.get(stage.name) != block
        blocks[stage.name] = block
    if modified:
        print(f"Updating lock file '{lockfile.relpath}'", flush=True)
        # A whole new file or none: a write cut short must not leave half a record.
        partial = path.with_name(f".{path.name}.{os.getpid()}")
        partial.write_text(head + "".join(blocks.values()), encoding="utf-8")
        partial.replace(path)
        lockfile.repo.scm_context.track_file(lockfile.relpath)
    return True


def write_lock_entries(repo: Any, stages: Sequence[Any]) -> None:
    """Record ``stages`` (saved and committed) in their ``dvc.lock`` as DVC would.

    The file is staged for git under the repository's SCM context, as DVC stages it, when
    an entry changed.
    """
    from dvc.dvcfile import Lockfile

    if not stages:
        return
    dvcfile = stages[0].dvcfile
    lockfile = Lockfile(repo, str(Path(dvcfile.path).with_suffix(".lock")))
    if not _written_in_place(lockfile, stages):
        dvcfile.dump_stages(stages, update_pipeline=False)


@contextlib.contextmanager
def dvc_writes_lock_entries_in_place() -> Iterator[None]:
    """While open, DVC's own commands in this process write lock entries in place.

    ``dvc exp save`` commits its targets one by one, each with a write of ``dvc.lock``:
    about 9 s each on the catalogue's, some 45 minutes for a quick pass's stages. Within
    this context DVC's ``Lockfile.dump_stages`` writes the same bytes in place instead.
    """
    from dvc.dvcfile import Lockfile

    original = Lockfile.dump_stages

    def dump_stages(self: Any, stages: Sequence[Any], **kwargs: Any) -> None:
        if kwargs or not stages or not _written_in_place(self, stages):
            original(self, stages, **kwargs)

    Lockfile.dump_stages = dump_stages  # type: ignore[method-assign]
    try:
        yield
    finally:
        Lockfile.dump_stages = original  # type: ignore[method-assign]
