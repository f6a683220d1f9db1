"""A seed group's dvc.lock entries (attnlab.fanout.lock_entries) against DVC's own writes."""

import contextlib
import shutil
from contextlib import nullcontext
from pathlib import Path

import yaml
from dvc.dvcfile import Lockfile
from dvc.repo import Repo

from attnlab.fanout.dvc_graph import locked_repo
from attnlab.fanout.lock_entries import dvc_writes_lock_entries_in_place, write_lock_entries


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
    tiny_dvc_project: Path, tmp_path: Path
):
    # An entry in the middle, the last one, and two DVC never wrote (appended, in order).
    names = ["count@beta-1", "count@gamma-2", "count@gamma-1", "count@beta-2"]
    theirs, ours = _record_both_ways(tiny_dvc_project, tmp_path, names)
    written = (ours / "dvc.lock").read_text()
    assert written == (theirs / "dvc.lock").read_text()
    assert written != (tiny_dvc_project / "dvc.lock").read_text()
    assert written.index("count@gamma-1:") < written.index("count@beta-2:")


def test_an_unchanged_entry_leaves_the_file_untouched(tiny_dvc_project: Path, tmp_path: Path):
    root = tmp_path / "same"
    shutil.copytree(tiny_dvc_project, root)
    lock = root / "dvc.lock"
    before = lock.stat().st_mtime_ns, lock.read_text()
    with locked_repo(root) as repo:
        (stage,) = repo.stage.collect("count@alpha-2")
        stage.save()
        write_lock_entries(repo, [stage])
    assert (lock.stat().st_mtime_ns, lock.read_text()) == before


def test_without_a_lock_file_dvc_writes_the_first_entries(tiny_dvc_project: Path, tmp_path: Path):
    root = tmp_path / "first"
    shutil.copytree(tiny_dvc_project, root)
    (root / "dvc.lock").unlink()
    with locked_repo(root) as repo:
        (stage,) = repo.stage.collect("count@alpha-1")
        stage.save()
        write_lock_entries(repo, [stage])
    text = (root / "dvc.lock").read_text()
    assert text.startswith("schema: '2.0'\nstages:\n  count@alpha-1:\n")
    assert "count@beta-1" not in text


def test_dvc_s_own_commits_write_the_same_file_with_entries_written_in_place(
    tiny_dvc_project: Path, tmp_path: Path
):
    # `dvc exp save STAGE...` commits its targets one by one, as here.
    locks = []
    for writer in ("dvc", "in place"):
        root = tmp_path / writer.replace(" ", "-")
        shutil.copytree(tiny_dvc_project, root)
        (root / "params.yaml").write_text("scale: 0.25  # the knob\n")
        for name in ("beta-1", "beta-2", "gamma-1"):
            (root / "out" / f"{name}.txt").write_text(f"{name} again")
        with contextlib.chdir(root), Repo(str(root)) as repo:
            with dvc_writes_lock_entries_in_place() if writer == "in place" else nullcontext():
                for target in ("count@beta-1", "count@beta-2", "count@gamma-1"):
                    repo.commit(target, force=True)
        locks.append((root / "dvc.lock").read_text())
    assert locks[0] == locks[1]
    assert "count@gamma-1:" in locks[1]
    assert Lockfile.dump_stages.__module__.startswith("dvc.")  # put back on the way out


def _cut_mid_scalar(lock: Path) -> str:
    """``lock`` cut inside its last path, as a full disk leaves it: still valid YAML."""
    text = lock.read_text()
    cut = text[: text.rindex("path: ") + len("path: ") + 3]
    lock.write_text(cut)
    yaml.safe_load(cut)  # parses: only the cut's position tells
    return cut


def test_a_lock_cut_short_is_rewritten_whole_as_dvc_does_never_glued_onto(
    tiny_dvc_project: Path, tmp_path: Path
):
    # The case: a stage recorded into a dvc.lock cut mid-scalar reported success
    # and left a lock that no longer parsed, staged for git.
    locks = []
    for writer in ("dvc", "ours"):
        root = tmp_path / writer
        shutil.copytree(tiny_dvc_project, root)
        _cut_mid_scalar(root / "dvc.lock")
        (root / "out" / "gamma-1.txt").write_text("gamma again")
        with locked_repo(root) as repo:
            (stage,) = repo.stage.collect("count@gamma-1")
            stage.save()
            if writer == "dvc":
                stage.dvcfile.dump_stages([stage], update_pipeline=False)
            else:
                write_lock_entries(repo, [stage])
        locks.append((root / "dvc.lock").read_text())
    assert locks[1] == locks[0]
    assert "count@gamma-1" in yaml.safe_load(locks[1])["stages"]
