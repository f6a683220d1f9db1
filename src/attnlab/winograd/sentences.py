"""The Winograd task (E16, E17 of docs/catalogue.md): a tiny language where *it* has a referent.

Every sentence is one fixed template of word-level tokens::

    the {x} did not cross the {y} because it was too {adj} , so the {ref} waited .

The adjective decides what *it* is. A crosser adjective (``tired scared slow weak``) makes
*it* the one who did not cross, so the referent is ``x``; a crossed-thing adjective
(``wet wide busy steep``) makes *it* the thing not crossed, so the referent is ``y``::

    the dog did not cross the river because it was too tired , so the dog waited .
    the dog did not cross the river because it was too wet , so the river waited .

A model reads the sentence left to right and is asked one question: the word after
``so the``. It can only get it right by combining the adjective with the *order* of the
two nouns. Two versions make that difference visible:

- **leaky** (E16): ``x`` is always an animal and ``y`` always a place. Held out are
  animal/place pairs never seen together in training. The bag of words leaks the answer:
  "tired" means "the animal", and the animal is the one from the animal list, whatever
  the order. An average of the words seen so far can solve it without reading order.
- **closed** (E17): both nouns come from one pool, ``x != y``, each noun in either slot.
  A held-out sentence uses an ordered pair ``(x, y)`` whose reverse ``(y, x)`` is in
  training and which itself never is. The held-out sentence
  ``the street did not cross the animal because it was too tired`` has exactly the bag of
  words of the training sentence ``the animal did not cross the street ... tired``, whose
  answer was ``animal``: anything that knows which nouns are present but not their order
  answers backwards.

What is held out is the task's difficulty knob, its *design*
(:data:`attnlab.catalogue.winograd.DESIGNS`):

- ``pairs``: noun pairs never seen together in training, in either order (E16's default;
  on the closed task both orientations of an unordered pair go).
- ``orientation`` (closed only, E17's default): one orientation of an unordered pair, its
  reverse kept in training, as above.
- ``nouns``: whole nouns that appear in no training sentence; every sentence with one of
  them is held out. Harder than either: such a noun's embedding and output row are never
  trained toward it, so answering it needs more than the words seen in training.

Pairs are drawn per noun pair (all eight adjectives of a pair go together), from a
generator seeded by the params seed, so the split is a pure function of the params. The
template, the designs and how many a share holds out are the catalogue's
(:mod:`attnlab.catalogue.winograd`); every builder here takes plain values.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from attnlab.catalogue import Task
from attnlab.catalogue.winograd import (
    DESIGNS,
    FUNCTION_WORDS,
    WORDS,
    Design,
    check_words,
    held_out_count,
    nouns_held_out,
)

Split = Literal["train", "held_out"]
Role = Literal["crosser", "crossed"]
# Each task's own stream of random draws under the one params seed: E16 and E17.
_TASK_STREAM = {"leaky": 16, "closed": 17}


@dataclass(frozen=True)
class Sentence:
    """One sentence of the task: its two nouns, its adjective and where it belongs."""

    x: str
    y: str
    adjective: str
    role: Role
    split: Split

    @property
    def referent(self) -> str:
        """What *it* refers to: ``x`` for a crosser adjective, ``y`` for a crossed one."""
        return self.x if self.role == "crosser" else self.y

    @property
    def other(self) -> str:
        """The wrong noun of the pair: the one that is not the referent."""
        return self.y if self.role == "crosser" else self.x

    @property
    def words(self) -> tuple[str, ...]:
        """The sentence's 18 words (tokens)."""
        slots = {"{x}": self.x, "{y}": self.y, "{adj}": self.adjective, "{ref}": self.referent}
        return tuple(slots.get(w, w) for w in WORDS)


@dataclass(frozen=True)
class Adjectives:
    """The adjectives by role: crossers make *it* ``x``, crossed ones make *it* ``y``."""

    crosser: tuple[str, ...]
    crossed: tuple[str, ...]

    def by_role(self) -> list[tuple[str, Role]]:
        """Every adjective with its role, crossers first, each list in its given order."""
        return [(a, "crosser") for a in self.crosser] + [(a, "crossed") for a in self.crossed]


@dataclass(frozen=True)
class WinogradTask:
    """One version of the task: its word vocabulary and every sentence, with its split."""

    name: Task
    vocabulary: tuple[str, ...]
    sentences: tuple[Sentence, ...]

    def split(self, split: Split) -> list[Sentence]:
        """The sentences of one split, in generation order."""
        return [s for s in self.sentences if s.split == split]

    def pairs(self, split: Split) -> set[tuple[str, str]]:
        """The ordered noun pairs ``(x, y)`` of one split."""
        return {(s.x, s.y) for s in self.sentences if s.split == split}


def build_vocabulary(nouns: Iterable[str], adjectives: Adjectives) -> tuple[str, ...]:
    """The task's vocabulary: template words, then adjectives, then nouns; ids are positions.

    Raises:
        ValueError: a word is repeated, empty, or contains whitespace (tokens are words).
    """
    nouns = tuple(nouns)
    check_words((*adjectives.crosser, *adjectives.crossed), nouns)
    return (*FUNCTION_WORDS, *adjectives.crosser, *adjectives.crossed, *nouns)


def encode(words: Sequence[str], vocabulary: Sequence[str]) -> list[int]:
    """Token ids of ``words``; raises KeyError naming a word outside the vocabulary."""
    index = {w: i for i, w in enumerate(vocabulary)}
    return [index[w] for w in words]


def decode(ids: Iterable[int], vocabulary: Sequence[str]) -> list[str]:
    """The words of token ids."""
    return [vocabulary[i] for i in ids]


def _hold_out_pairs(
    candidates: list[tuple[str, str]],
    n_held: int,
    seed: int,
    task: Task,
    design: Design,
) -> set[tuple[str, str]]:
    """Draw ``n_held`` candidate pairs to hold out, keeping every noun in training.

    Candidates are visited in a seeded random order; one is taken only if each ordered
    pair it holds out leaves its ``x`` another training pair as ``x`` and its ``y`` another
    as ``y``, so no noun's embedding goes untrained in the slot it is tested in. On the
    closed task each candidate is an unordered pair: ``orientation`` holds out one
    orientation, drawn at random, whose reverse stays; ``pairs`` holds out both.
    """
    rng = np.random.default_rng([seed, _TASK_STREAM[task]])
    order = rng.permutation(len(candidates))
    # Drawn whatever the design, so that every design visits the pairs in one order.
    flips = rng.integers(0, 2, size=len(candidates))
    closed = task == "closed"
    as_x = {x: 0 for x, _ in candidates} | {y: 0 for _, y in candidates}
    as_y = dict(as_x)
    for a, b in candidates:
        as_x[a] += 1
        as_y[b] += 1
        if closed:  # both orientations are training pairs until one is held out
            as_x[b] += 1
            as_y[a] += 1
    held: set[tuple[str, str]] = set()
    taken = 0
    for i in order:
        if taken == n_held:
            break
        a, b = candidates[i]
        if not closed:
            group = [(a, b)]
        elif design == "pairs":
            group = [(a, b), (b, a)]
        else:
            group = [(b, a)] if flips[i] else [(a, b)]
        if all(as_x[x] > 1 and as_y[y] > 1 for x, y in group):
            held.update(group)
            taken += 1
            for x, y in group:
                as_x[x] -= 1
                as_y[y] -= 1
    if taken < n_held:
        raise ValueError(f"{task}: cannot hold out {n_held} pairs and keep every noun in training")
    return held


def _hold_out_nouns(
    pools: Sequence[Sequence[str]], share: float, seed: int, task: Task
) -> set[str]:
    """Draw ``share`` of each pool's nouns (at least one) to keep out of training.

    Raises:
        ValueError: a pool would have no noun left to train on.
    """
    rng = np.random.default_rng([seed, _TASK_STREAM[task]])
    held: set[str] = set()
    for pool in pools:
        n_held = nouns_held_out(len(pool), share, task)
        held.update(pool[i] for i in rng.permutation(len(pool))[:n_held])
    return held


def _sentences(
    pairs: Iterable[tuple[str, str]], held: set[tuple[str, str]], adjectives: Adjectives
) -> tuple[Sentence, ...]:
    return tuple(
        Sentence(x, y, adj, role, "held_out" if (x, y) in held else "train")
        for x, y in pairs
        for adj, role in adjectives.by_role()
    )


def _check_design(task: Task, design: Design) -> None:
    if design not in DESIGNS[task]:
        raise ValueError(f"{task}: held-out design {design!r} is not one of {DESIGNS[task]}")


def leaky_task(
    animals: Sequence[str],
    places: Sequence[str],
    adjectives: Adjectives,
    share: float,
    seed: int,
    design: Design = "pairs",
) -> WinogradTask:
    """E16: every animal/place pair with every adjective, some held out by ``design``.

    ``pairs`` holds out ``share`` of the pairs; ``nouns`` that share of the
    animals and of the places, with every sentence that has one of them.

    Returns:
        ``len(animals) * len(places) * 8`` sentences, animal first; held-out pairs never
        occur in training, in either order (a place never comes first).
    """
    _check_design("leaky", design)
    vocabulary = build_vocabulary([*animals, *places], adjectives)
    pairs = list(itertools.product(animals, places))
    if design == "nouns":
        nouns = _hold_out_nouns([animals, places], share, seed, "leaky")
        held = {(x, y) for x, y in pairs if x in nouns or y in nouns}
    else:
        n_held = held_out_count(len(pairs), share)
        held = _hold_out_pairs(pairs, n_held, seed, "leaky", design)
    return WinogradTask("leaky", vocabulary, _sentences(pairs, held, adjectives))


def closed_task(
    nouns: Sequence[str],
    adjectives: Adjectives,
    share: float,
    seed: int,
    design: Design = "orientation",
) -> WinogradTask:
    """E17: every ordered pair of distinct nouns with every adjective.

    ``orientation``: ``share`` of the unordered pairs ``{a, b}`` have one
    orientation, drawn at random, held out; the other orientation stays in training.
    ``pairs``: both orientations go. ``nouns``: that share of the nouns, with every
    sentence that has one of them.

    Returns:
        ``n * (n - 1) * 8`` sentences for ``n`` nouns (16 * 15 * 8 = 1920).
    """
    _check_design("closed", design)
    vocabulary = build_vocabulary(nouns, adjectives)
    ordered = list(itertools.permutations(nouns, 2))
    if design == "nouns":
        unseen = _hold_out_nouns([nouns], share, seed, "closed")
        held = {(x, y) for x, y in ordered if x in unseen or y in unseen}
    else:
        unordered = list(itertools.combinations(nouns, 2))
        n_held = held_out_count(len(unordered), share)
        held = _hold_out_pairs(unordered, n_held, seed, "closed", design)
    return WinogradTask("closed", vocabulary, _sentences(ordered, held, adjectives))
