"""The Winograd generator: counts, determinism, hold-outs that cannot leak, round-trips."""

from collections import Counter

import pytest

from attnlab.catalogue.winograd import ANSWER_POSITION, QUERY_POSITION, SENTENCE_LENGTH
from attnlab.winograd.sentences import (
    Adjectives,
    Sentence,
    build_vocabulary,
    closed_task,
    decode,
    encode,
    leaky_task,
)

ADJECTIVES = Adjectives(("tired", "scared", "slow", "weak"), ("wet", "wide", "busy", "steep"))
POOL = [
    "animal", "street", "dog", "cat", "horse", "fox", "cow", "duck",
    "river", "road", "bridge", "field", "hill", "lake", "wall", "gate",
]  # fmt: skip
ANIMALS = ["dog", "cat", "horse", "fox", "cow", "goat", "sheep", "duck"]
PLACES = ["street", "river", "road", "bridge", "field", "hill", "lake", "wall"]


def _closed(seed: int = 1337, share: float = 0.25):
    return closed_task(POOL, ADJECTIVES, share, seed)


def _leaky(seed: int = 1337, share: float = 0.25):
    return leaky_task(ANIMALS, PLACES, ADJECTIVES, share, seed)


def test_the_template_and_the_referent_by_role():
    tired = Sentence("dog", "river", "tired", "crosser", "train")
    wet = Sentence("dog", "river", "wet", "crossed", "train")
    assert " ".join(tired.words) == (
        "the dog did not cross the river because it was too tired , so the dog waited ."
    )
    assert (tired.referent, tired.other) == ("dog", "river")
    assert (wet.referent, wet.other) == ("river", "dog")
    assert len(wet.words) == SENTENCE_LENGTH == 18
    assert wet.words[QUERY_POSITION - 1 : ANSWER_POSITION + 1] == ("so", "the", "river")


def test_closed_has_every_ordered_pair_of_distinct_nouns_with_every_adjective():
    task = _closed()
    assert len(task.sentences) == 16 * 15 * 8
    triples = Counter((s.x, s.y, s.adjective) for s in task.sentences)
    assert len(triples) == len(task.sentences) and all(s.x != s.y for s in task.sentences)
    assert len(task.pairs("held_out")) == round(0.25 * 16 * 15 / 2) == 30
    assert len(task.split("held_out")) == 30 * 8
    assert len(task.vocabulary) == 12 + 8 + 16


def test_closed_held_out_pairs_never_train_and_their_reverse_always_does():
    task = _closed()
    train, held = task.pairs("train"), task.pairs("held_out")
    assert train.isdisjoint(held)
    assert all((y, x) in train for x, y in held)
    # Every noun is still trained in both slots.
    assert {x for x, _ in train} == {y for _, y in train} == set(POOL)


def test_leaky_counts_and_slots():
    task = _leaky()
    assert len(task.sentences) == 8 * 8 * 8
    assert all(s.x in ANIMALS and s.y in PLACES for s in task.sentences)
    assert len(task.pairs("held_out")) == 16


def test_leaky_held_out_pairs_are_never_seen_in_training():
    task = _leaky()
    train_pairs = task.pairs("train")
    for sentence in task.split("held_out"):
        assert (sentence.x, sentence.y) not in train_pairs
        assert (sentence.y, sentence.x) not in train_pairs
    assert {x for x, _ in train_pairs} == set(ANIMALS)
    assert {y for _, y in train_pairs} == set(PLACES)


def test_the_split_is_a_pure_function_of_the_seed():
    assert _closed(7) == _closed(7) and _leaky(7) == _leaky(7)
    assert _closed(7).pairs("held_out") != _closed(8).pairs("held_out")
    assert _leaky(7).pairs("held_out") != _leaky(8).pairs("held_out")


def test_an_adjective_decides_the_referent_in_every_sentence():
    for s in _closed().sentences:
        expected = s.x if s.adjective in ADJECTIVES.crosser else s.y
        assert s.referent == expected and s.words[ANSWER_POSITION] == expected


def test_tokens_round_trip():
    task = _closed()
    for sentence in task.sentences[::37]:
        ids = encode(sentence.words, task.vocabulary)
        assert all(0 <= i < len(task.vocabulary) for i in ids)
        assert tuple(decode(ids, task.vocabulary)) == sentence.words


def test_a_word_outside_the_vocabulary_is_named():
    with pytest.raises(KeyError, match="zebra"):
        encode(["the", "zebra"], _closed().vocabulary)


@pytest.mark.parametrize(
    ("nouns", "message"),
    [(["dog", "dog", "cat"], "used twice"), (["dog", "so"], "used twice"), (["a b"], "single")],
)
def test_a_bad_vocabulary_is_refused(nouns, message):
    with pytest.raises(ValueError, match=message):
        build_vocabulary(nouns, ADJECTIVES)


def test_an_impossible_hold_out_is_refused():
    with pytest.raises(ValueError, match="keep every noun in training"):
        leaky_task(["dog", "cat"], ["road", "hill"], ADJECTIVES, 0.9, 0)
