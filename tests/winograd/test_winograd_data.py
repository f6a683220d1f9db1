"""A task's Parquet file: the same bytes every time, and it reads back to the same sentences."""

import pytest

from attnlab.winograd.sentences import Adjectives, closed_task, decode
from attnlab.winograd.task_files import (
    pair_split,
    read_sentences,
    read_vocabulary,
    read_words,
    write_task,
)

ADJECTIVES = Adjectives(("tired", "scared"), ("wet", "wide"))
NOUNS = ["animal", "street", "dog", "cat", "road"]


@pytest.fixture
def task():
    return closed_task(NOUNS, ADJECTIVES, 0.3, seed=5)


def test_the_file_reads_back_to_the_same_sentences(task, tmp_path):
    path = tmp_path / "closed.parquet"
    write_task(task, path)
    vocabulary = read_vocabulary(path)
    assert vocabulary == task.vocabulary
    for split in ("train", "held_out"):
        ids = read_sentences(path, split)
        expected = task.split(split)
        assert ids.shape == (len(expected), 18) and ids.dtype.is_floating_point is False
        assert [tuple(decode(row.tolist(), vocabulary)) for row in ids] == [
            s.words for s in expected
        ]
        words = read_words(path, split)
        assert [(w["x"], w["y"], w["adjective"], w["referent"]) for w in words] == [
            (s.x, s.y, s.adjective, s.referent) for s in expected
        ]
    assert len(read_sentences(path)) == len(task.sentences)


def test_the_same_task_writes_the_same_bytes(task, tmp_path):
    # DVC skips the training stages downstream only if an unchanged task rewrites
    # byte-identical files.
    write_task(task, tmp_path / "a.parquet")
    write_task(closed_task(NOUNS, ADJECTIVES, 0.3, seed=5), tmp_path / "b.parquet")
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()


def test_a_pair_is_found_in_its_split(task, tmp_path):
    path = tmp_path / "closed.parquet"
    write_task(task, path)
    x, y = sorted(task.pairs("held_out"))[0]
    assert pair_split(path, x, y) == "held_out"
    assert pair_split(path, y, x) == "train"
    with pytest.raises(ValueError, match="no sentence has the pair"):
        pair_split(path, "animal", "animal")
