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

Hold-outs are drawn per noun pair (all eight adjectives of a pair go together), from a
generator seeded by the params seed, so the split is a pure function of the params.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

if TYPE_CHECKING:
    from attnlab.config.winograd import WinogradParams

TEMPLATE = "the {x} did not cross the {y} because it was too {adj} , so the {ref} waited ."
WORDS: tuple[str, ...] = tuple(TEMPLATE.split())
SENTENCE_LENGTH = len(WORDS)  # 18 tokens
X_POSITION = WORDS.index("{x}")  # 1
Y_POSITION = WORDS.index("{y}")  # 6
ADJECTIVE_POSITION = WORDS.index("{adj}")  # 11
ANSWER_POSITION = WORDS.index("{ref}")  # 15: the referent
QUERY_POSITION = ANSWER_POSITION - 1  # 14: the "the" after "so", which predicts the referent
# The words of the template that are not slots, in order of first appearance.
FUNCTION_WORDS: tuple[str, ...] = tuple(dict.fromkeys(w for w in WORDS if not w.startswith("{")))

TaskName = Literal["leaky", "closed"]
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

    name: TaskName
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
    vocabulary = (*FUNCTION_WORDS, *adjectives.crosser, *adjectives.crossed, *nouns)
    for word in vocabulary:
        if not word or word.split() != [word]:
            raise ValueError(f"{word!r} is not a single word")
    repeated = sorted({w for w in vocabulary if vocabulary.count(w) > 1})
    if repeated:
        raise ValueError(f"words used twice (template, adjectives, nouns): {repeated}")
    return vocabulary


def encode(words: Sequence[str], vocabulary: Sequence[str]) -> list[int]:
    """Token ids of ``words``; raises KeyError naming a word outside the vocabulary."""
    index = {w: i for i, w in enumerate(vocabulary)}
    return [index[w] for w in words]


def decode(ids: Iterable[int], vocabulary: Sequence[str]) -> list[str]:
    """The words of token ids."""
    return [vocabulary[i] for i in ids]


def _hold_out(
    candidates: list[tuple[str, str]], n_held: int, seed: int, task: TaskName, *, closed: bool
) -> set[tuple[str, str]]:
    """Draw ``n_held`` ordered pairs to hold out, keeping every noun in training.

    Candidates are visited in a seeded random order; one is taken only if its ``x`` still
    has another training pair as ``x`` and its ``y`` another as ``y``, so no noun's
    embedding goes untrained in the slot it is tested in. For the closed task each
    candidate is an unordered pair, held out in a random orientation whose reverse stays.
    """
    rng = np.random.default_rng([seed, _TASK_STREAM[task]])
    order = rng.permutation(len(candidates))
    flips = rng.integers(0, 2, size=len(candidates))
    as_x = {x: 0 for x, _ in candidates} | {y: 0 for _, y in candidates}
    as_y = dict(as_x)
    for a, b in candidates:
        as_x[a] += 1
        as_y[b] += 1
        if closed:  # both orientations are training pairs until one is held out
            as_x[b] += 1
            as_y[a] += 1
    held: set[tuple[str, str]] = set()
    for i in order:
        if len(held) == n_held:
            break
        x, y = candidates[i][::-1] if closed and flips[i] else candidates[i]
        if as_x[x] > 1 and as_y[y] > 1:
            held.add((x, y))
            as_x[x] -= 1
            as_y[y] -= 1
    if len(held) < n_held:
        raise ValueError(f"{task}: cannot hold out {n_held} pairs and keep every noun in training")
    return held


def _sentences(
    pairs: Iterable[tuple[str, str]], held: set[tuple[str, str]], adjectives: Adjectives
) -> tuple[Sentence, ...]:
    return tuple(
        Sentence(x, y, adj, role, "held_out" if (x, y) in held else "train")
        for x, y in pairs
        for adj, role in adjectives.by_role()
    )


def _n_held(n_candidates: int, share: float) -> int:
    if not 0.0 < share < 1.0:
        raise ValueError(f"held_out_share must be in (0, 1), got {share}")
    return max(1, round(share * n_candidates))


def leaky_task(
    animals: Sequence[str],
    places: Sequence[str],
    adjectives: Adjectives,
    held_out_share: float,
    seed: int,
) -> WinogradTask:
    """E16: every animal/place pair with every adjective; ``held_out_share`` of pairs held out.

    Returns:
        ``len(animals) * len(places) * 8`` sentences, animal first; held-out pairs never
        occur in training, in either order (a place never comes first).
    """
    vocabulary = build_vocabulary([*animals, *places], adjectives)
    pairs = list(itertools.product(animals, places))
    held = _hold_out(pairs, _n_held(len(pairs), held_out_share), seed, "leaky", closed=False)
    return WinogradTask("leaky", vocabulary, _sentences(pairs, held, adjectives))


def closed_task(
    nouns: Sequence[str], adjectives: Adjectives, held_out_share: float, seed: int
) -> WinogradTask:
    """E17: every ordered pair of distinct nouns with every adjective.

    ``held_out_share`` of the unordered pairs ``{a, b}`` have one orientation, drawn at
    random, held out; the other orientation stays in training.

    Returns:
        ``n * (n - 1) * 8`` sentences for ``n`` nouns (16 * 15 * 8 = 1920).
    """
    vocabulary = build_vocabulary(nouns, adjectives)
    unordered = list(itertools.combinations(nouns, 2))
    held = _hold_out(
        unordered, _n_held(len(unordered), held_out_share), seed, "closed", closed=True
    )
    ordered = itertools.permutations(nouns, 2)
    return WinogradTask("closed", vocabulary, _sentences(ordered, held, adjectives))


def build_task(params: WinogradParams, task: TaskName, seed: int) -> WinogradTask:
    """Generate every sentence of ``task`` with its split from params ``winograd``, by ``seed``."""
    adjectives = params.adjectives.adjectives()
    if task == "leaky":
        cfg = params.leaky
        return leaky_task(cfg.animals, cfg.places, adjectives, cfg.held_out_share, seed)
    return closed_task(params.closed.nouns, adjectives, params.closed.held_out_share, seed)
