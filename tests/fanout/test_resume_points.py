"""The units of training with a resume point, read from the folders the trainer names."""

import os
from types import SimpleNamespace

from attnlab.fanout.resume_points import resumable_units, resume_steps
from attnlab.training.checkpoints import AtomicCheckpointIO
from attnlab.training.job import checkpoint_dir


def _state(run_root, variant, seed, group=(), digest="813f2e62b473bd31", mtime=0.0):
    """A resume folder as the trainer names it (checkpoint_dir), holding last.ckpt."""
    job = SimpleNamespace(variant=SimpleNamespace(name=variant), seed=seed)
    folder = checkpoint_dir(run_root, job, digest, group)
    folder.mkdir(parents=True)
    (folder / "last.ckpt").write_bytes(b"state")
    os.utime(folder / "last.ckpt", (mtime, mtime))
    return folder


def test_each_unit_s_variant_and_seeds_in_their_order_newest_first(tmp_path):
    _state(tmp_path, "depth-2", 1339, (1339, 1338, 1337), mtime=100)
    _state(tmp_path, "positions-rope", 1345, (1345, 1346), "0123456789012345", mtime=300)
    _state(tmp_path, "positions-rope", 1346, (1346, 1345), "ca587955213c4097", mtime=200)
    _state(tmp_path, "dk-128-scaled", 1340, mtime=50)  # a lone seed
    assert resumable_units(tmp_path) == [
        ("positions-rope", (1345, 1346)),
        ("positions-rope", (1346, 1345)),
        ("depth-2", (1339, 1338, 1337)),
        ("dk-128-scaled", (1340,)),
    ]


def test_a_folder_without_its_state_or_no_run_root_yet_has_nothing_to_resume(tmp_path):
    assert resumable_units(tmp_path) == []
    (_state(tmp_path, "depth-2", 1337, (1337, 1338)) / "last.ckpt").unlink()
    assert resumable_units(tmp_path) == []


def test_each_seed_s_steps_done_are_its_newest_resume_point_s_and_a_corrupt_one_counts_none(
    tmp_path,
):
    group = _state(tmp_path, "depth-2", 1337, (1337, 1338), mtime=200)
    AtomicCheckpointIO().save_checkpoint({"global_step": 120}, group / "last.ckpt")
    os.utime(group / "last.ckpt", (200, 200))
    older = _state(tmp_path, "depth-2", 1338, digest="ca587955213c4097", mtime=100)
    AtomicCheckpointIO().save_checkpoint({"global_step": 40}, older / "last.ckpt")
    os.utime(older / "last.ckpt", (100, 100))
    _state(tmp_path, "dk-128-scaled", 1340)  # b"state": no checkpoint header
    assert resume_steps(tmp_path) == {("depth-2", 1337): 120, ("depth-2", 1338): 120}
