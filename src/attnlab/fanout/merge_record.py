"""Merge what another machine recorded (a ``gpu_story`` tarball) into this checkout.

Serves ``attnlab merge-record TARBALL``: a GPU lent for minutes runs
``benchmarks/gpu_story.py --time-limit``, which packs the record it advanced (``dvc.lock``,
``reports/metrics``, ``reports/curves``, ``reports/sweeps``, ``data/sweeps``); this puts
each stage it recorded into the checkout, with the files git keeps for it, and keeps only
what DVC then counts as current here (as ``dvc repro --allow-missing`` decides, the
models being on the other machine). A stage recorded from other code or params than the
checkout's is left out and said, and so is one that reads a stage left out: the checkout
never holds a lock entry its code does not give.
"""

import shutil
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from attnlab.errors import AttnlabError
from attnlab.fanout.dvc_graph import DvcGraph, read_graph
from attnlab.fanout.lock_entries import split_blocks

PACKED_UNDER = "gpu_story"  # the tarball's top folder


@dataclass
class Merged:
    """What a merge took, and what it left out.

    Attributes:
        taken: Stages whose entry (and git-kept outputs) came from the tarball.
        refused: Stages the tarball recorded that are not current here, with DVC's word.
    """

    taken: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """What happened, for the user."""
        lines = [f"merged {len(self.taken)} stage(s) into dvc.lock"]
        if self.refused:
            lines.append(
                f"left out {len(self.refused)} stage(s) recorded from other code, params or "
                f"inputs than this checkout's: {', '.join(sorted(self.refused))}"
            )
        return lines


def _entries(lock: Path) -> dict:
    return (yaml.safe_load(lock.read_text()) or {}).get("stages", {})


def _kept_outputs(entry: dict, packed: Path) -> list[str]:
    """The entry's outputs that the tarball holds (the ones git keeps; models are not)."""
    return [out["path"] for out in entry.get("outs", []) if (packed / out["path"]).exists()]


def _copy(source: Path, target: Path) -> None:
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    (shutil.copytree if source.is_dir() else shutil.copy2)(source, target)


def _write_lock(root: Path, blocks: dict[str, str], head: str) -> None:
    partial = root / ".dvc.lock.merging"
    partial.write_text(head + "".join(blocks.values()), encoding="utf-8")
    partial.replace(root / "dvc.lock")


def merge_record(root: Path, tarball: Path) -> Merged:
    """Take into ``root`` every stage ``tarball`` recorded that is current here.

    Args:
        root: The checkout (a DVC project whose ``dvc.lock`` DVC wrote).
        tarball: A ``gpu_story.tar.gz`` (or any tarball of the same layout).

    Raises:
        AttnlabError: the tarball or a lock file is not what a merge needs.
    """
    if not tarball.is_file():
        raise AttnlabError(f"{tarball}: no such tarball")
    with tempfile.TemporaryDirectory(prefix="merge-record-") as folder:
        with tarfile.open(tarball) as tar:
            tar.extractall(folder, filter="data")
        packed = Path(folder) / PACKED_UNDER
        if not (packed / "dvc.lock").is_file():
            raise AttnlabError(f"{tarball} holds no {PACKED_UNDER}/dvc.lock")
        return _merge(root, packed)


def _merge(root: Path, packed: Path) -> Merged:
    theirs = split_blocks((packed / "dvc.lock").read_text(encoding="utf-8"))
    lock = root / "dvc.lock"
    ours = split_blocks(lock.read_text(encoding="utf-8")) if lock.exists() else None
    if theirs is None or (ours is None and lock.exists()):
        raise AttnlabError("dvc.lock is not in the shape DVC writes: merge it with git")
    ours = ours or (theirs[0], {})  # no record here yet: the tarball's header
    head, blocks = ours
    original = dict(blocks)
    entries = _entries(packed / "dvc.lock")
    candidates = [name for name, block in theirs[1].items() if blocks.get(name) != block]
    saved: dict[str, Path] = {}  # each overwritten output's path -> its backup
    backup = Path(packed.parent / "ours")
    for name in candidates:
        blocks[name] = theirs[1][name]
        for path in _kept_outputs(entries[name], packed):
            if (root / path).exists() and path not in saved:
                saved[path] = backup / path
                _copy(root / path, saved[path])
            _copy(packed / path, root / path)
    _write_lock(root, blocks, head)
    merged = Merged()
    refused: set[str] = set()
    while True:  # a stage left out can make the stages that read it stale: until none is
        stale = set(read_graph(root, lambda graph: _stale(graph, candidates))) - refused
        if not stale:
            break
        refused |= stale
        for name in stale:
            _put_back(root, name, entries[name], packed, original, blocks, saved)
        _write_lock(root, blocks, head)
    merged.taken = [name for name in candidates if name not in refused]
    merged.refused = sorted(refused)
    return merged


def _stale(graph: DvcGraph, names: list[str]) -> list[str]:
    stages = [stage for name in names if (stage := graph.stage(name)) is not None]
    missing = [name for name in names if graph.stage(name) is None]
    return missing + graph.changed(stages, allow_missing=True)


def _put_back(
    root: Path,
    name: str,
    entry: dict,
    packed: Path,
    original: dict[str, str],
    blocks: dict[str, str],
    saved: dict[str, Path],
) -> None:
    """Undo the merge of ``name``: its old entry (or none) and its old outputs."""
    if name in original:
        blocks[name] = original[name]
    else:
        blocks.pop(name, None)
    for path in _kept_outputs(entry, packed):
        if path in saved:
            _copy(saved[path], root / path)
        elif (root / path).is_dir():
            shutil.rmtree(root / path)
        else:
            (root / path).unlink(missing_ok=True)
