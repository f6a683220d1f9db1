"""A seed group's dvc.lock entries (attnlab.fanout.lock_entries) against DVC's own writes."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from attnlab.fanout.dvc_graph import locked_repo
from attnlab.fanout.lock_entries import write_lock_entries

DVC_YAML = """\
stages:
  count:
    matrix: {word: [alpha, beta, gamma], seed: [1, 2]}
    cmd: python -c "open('out/${item.word}-${item.seed}.txt', 'w').write('${item.word}')"
    deps: ["inputs/${item.word}.txt"]
    params: [scale]
    outs: ["out/${item.word}-${item.seed}.txt"]
"""


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def _dvc(root: Path, *args: str) -> None:
    subprocess.run([sys.executable, "-m", "dvc", *args], cwd=root, check=True, capture_output=True)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A DVC project whose first stages DVC itself recorded, the others not yet."""
    root = tmp_path_factory.mktemp("locks")
    _git(root, "init", "-q")
    _git(root, "config", "user.email", "lab@example.org")
    _git(root, "config", "user.name", "lab")
    _dvc(root, "init", "-q")
    (root / "dvc.yaml").write_text(DVC_YAML)
    (root / "params.yaml").write_text("scale: 0.5  # the knob\n")
    (root / "inputs").mkdir()
    (root / "out").mkdir()
    for word in ("alpha", "beta", "gamma"):
        (root / "inputs" / f"{word}.txt").write_text(word * 3)
    for stage in ("count@alpha-1", "count@alpha-2", "count@beta-1", "count@gamma-2"):
        _dvc(root, "repro", "--single-item", stage)
    return root


def _record_both_ways(root: Path, tmp_path: Path, names: list[str]) -> tuple[Path, Path]:
    """Copies of ``root`` where ``names`` were saved, then written by DVC and by us."""
    copies = []
    for writer in ("dvc", "ours"):
        copy = tmp_path / writer
        shutil.copytree(root, copy)
        (copy / "inputs" / "beta.txt").write_text("changed")  # one entry's dep hash moves
        (copy / "params.yaml").write_text("scale: 0.25  # the knob\n")
        for name in names:
            word, seed = name.removeprefix("count@").split("-")
            (copy / "out" / f"{word}-{seed}.txt").write_text(f"{word} again")
        with locked_repo(copy) as repo:
            stages = [repo.stage.collect(name)[0] for name in names]
            for stage in stages:
                stage.save()
            if writer == "dvc":
                stages[0].dvcfile.dump_stages(stages, update_pipeline=False)
            else:
                write_lock_entries(repo, stages)
        copies.append(copy)
    return copies[0], copies[1]


def test_updated_and_new_entries_are_written_byte_for_byte_as_dvc_writes_them(
    recorded: Path, tmp_path: Path
):
    # An entry in the middle, the last one, and two DVC never wrote (appended, in order).
    names = ["count@beta-1", "count@gamma-2", "count@gamma-1", "count@beta-2"]
    theirs, ours = _record_both_ways(recorded, tmp_path, names)
    written = (ours / "dvc.lock").read_text()
    assert written == (theirs / "dvc.lock").read_text()
    assert written != (recorded / "dvc.lock").read_text()
    assert written.index("count@gamma-1:") < written.index("count@beta-2:")


def test_an_unchanged_entry_leaves_the_file_untouched(recorded: Path, tmp_path: Path):
    root = tmp_path / "same"
    shutil.copytree(recorded, root)
    lock = root / "dvc.lock"
    before = lock.stat().st_mtime_ns, lock.read_text()
    with locked_repo(root) as repo:
        (stage,) = repo.stage.collect("count@alpha-2")
        stage.save()
        write_lock_entries(repo, [stage])
    assert (lock.stat().st_mtime_ns, lock.read_text()) == before


def test_without_a_lock_file_dvc_writes_the_first_entries(recorded: Path, tmp_path: Path):
    root = tmp_path / "first"
    shutil.copytree(recorded, root)
    (root / "dvc.lock").unlink()
    with locked_repo(root) as repo:
        (stage,) = repo.stage.collect("count@alpha-1")
        stage.save()
        write_lock_entries(repo, [stage])
    text = (root / "dvc.lock").read_text()
    assert text.startswith("schema: '2.0'\nstages:\n  count@alpha-1:\n")
    assert "count@beta-1" not in text
