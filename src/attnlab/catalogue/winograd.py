"""What the Winograd tasks are (E16 leaky, E17 closed): their template and what each holds out.

Every sentence of both tasks fills one template of word-level tokens (docs/catalogue.md,
E16 and E17); a task's vocabulary is the template's words, the adjectives and the nouns.
What a task holds out is its *design* (:data:`DESIGNS`), and a held-out share takes at
least one of what it is a share of. These are facts of the experiments, not knobs: the
params loader checks params ``winograd`` against them before any stage works, and
:mod:`attnlab.winograd` builds the sentences from them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, get_args

from attnlab.catalogue.entries import Task

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

# What each task can hold out: the leaky task has no reversed pairs to keep.
LeakyDesign = Literal["pairs", "nouns"]
ClosedDesign = Literal["pairs", "orientation", "nouns"]
Design = ClosedDesign  # every design: the closed task can hold out each
DESIGNS: dict[Task, tuple[Design, ...]] = {
    "leaky": get_args(LeakyDesign),
    "closed": get_args(ClosedDesign),
}


def check_words(adjectives: Sequence[str], nouns: Sequence[str]) -> None:
    """Refuse words a task cannot use beside the template's: each is one token, none twice.

    Raises:
        ValueError: a word is repeated, empty, or contains whitespace (tokens are words).
    """
    words = (*FUNCTION_WORDS, *adjectives, *nouns)
    for word in words:
        if not word or word.split() != [word]:
            raise ValueError(f"{word!r} is not a single word")
    repeated = sorted({w for w in words if words.count(w) > 1})
    if repeated:
        raise ValueError(f"words used twice (template, adjectives, nouns): {repeated}")


def held_out_count(candidates: int, share: float) -> int:
    """How many of ``candidates`` (pairs or nouns) a held-out ``share`` takes: at least one.

    Raises:
        ValueError: ``share`` is not in (0, 1).
    """
    if not 0.0 < share < 1.0:
        raise ValueError(f"held_out share must be in (0, 1), got {share}")
    return max(1, round(share * candidates))


def nouns_held_out(pool_size: int, share: float, task: Task) -> int:
    """How many of a pool's nouns the ``nouns`` design holds out: ``share``, at least one.

    Raises:
        ValueError: too few nouns would be left to train on (one of each pool on the
            leaky task, two on the closed task, whose pairs are of one pool).
    """
    n_held = held_out_count(pool_size, share)
    keep = 2 if task == "closed" else 1
    if pool_size - n_held < keep:
        raise ValueError(
            f"holding out {n_held} of {pool_size} nouns leaves fewer than {keep} to train on"
        )
    return n_held
