"""The claims of E16 and E17 (the Winograd task): accuracies and attention maps.

Accuracy is scored at the position after ``so the``; chance between the two nouns of the
sentence is 50 %. The map claims read the two-block model of the closed task (E17): the
row of attention weights at that query position, per block, averaged over heads, for each
of the eight adjectives (:mod:`attnlab.report.winograd`). The maps stage draws one model
(one seed), so the map claims are point decisions on that model; the accuracy claims are
decided over seeds (:mod:`attnlab.report.rules`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from attnlab.report.results import Results
from attnlab.report.rules import (
    FAILS,
    HOLDS,
    Outcome,
    Ref,
    Rule,
    Values,
    all_of,
    below_chance,
    greater,
    in_range,
)
from attnlab.report.winograd import (
    ADJECTIVE,
    CROSSED,
    FIRST_NOUN,
    MODELS,
    SECOND_NOUN,
    Maps,
    read_maps,
    source,
)


@dataclass(frozen=True)
class MapsRef(Ref):
    """The attention maps of one Winograd model, by adjective (``None`` when not drawn).

    ``exact`` by default: the maps stage draws one model, decided as a point.
    """

    exact: bool = True

    def get(self, results: Results) -> Maps | None:
        """The maps, or ``None``."""
        return read_maps(results, self.source) or None

    def where(self, results: Results) -> str:
        """Where the maps are read from (one file, never an alias's)."""
        return f"the attention maps of {self.source}"


def acc(task: str, model: str, key: str = "winograd/acc") -> Ref:
    """A held-out score of one Winograd model (``winograd/acc`` or ``winograd/wrong_noun``)."""
    what = {
        "winograd/wrong_noun": "wrong-noun share",
        "winograd/sentences": "held-out sentences",
    }.get(key, "accuracy")
    return Ref(source(task, model), key, f"{what}({task}, {MODELS[model]})")


def _block_rule(test: str, check: Any) -> Rule:
    maps = MapsRef(source("closed", "two-blocks"), "maps", "maps")

    def decide(values: Values) -> Outcome:
        holds, numbers = check(values[maps])
        return Outcome(HOLDS if holds else FAILS, numbers)

    return Rule((maps,), f"{test} (the one model the maps stage draws: a point decision)", decide)


def _identical(maps: Maps) -> tuple[bool, str]:
    rows = {adj: m.blocks[0] for adj, m in maps.items()}
    distance = max(
        (0.5 * sum(abs(p - q) for p, q in zip(a, b, strict=True)), x, y)
        for (x, a), (y, b) in itertools.combinations(rows.items(), 2)
    )
    return distance[0] <= 0.05, (
        f"largest total-variation distance between two adjectives' block-1 rows: "
        f"{distance[0]:.3f} ({distance[1]} vs {distance[2]})"
    )


def _first_noun(maps: Maps) -> tuple[bool, str]:
    top = {
        adj: max(range(len(m.blocks[0])), key=m.blocks[0].__getitem__) for adj, m in maps.items()
    }
    wrong = sorted(adj for adj, position in top.items() if position != FIRST_NOUN)
    weights = ", ".join(f"{adj} {maps[adj].blocks[0][FIRST_NOUN]:.2f}" for adj in maps)
    return not wrong, f"block-1 weight on the first noun: {weights}" + (
        f"; largest elsewhere for {', '.join(wrong)}" if wrong else ""
    )


def _reads_adjective(maps: Maps) -> tuple[bool, str]:
    uniform = 1 / len(next(iter(maps.values())).blocks[1])
    weights = {adj: m.blocks[1][ADJECTIVE] for adj, m in maps.items()}
    shown = ", ".join(f"{adj} {w:.2f}" for adj, w in weights.items())
    holds = all(w >= uniform for w in weights.values())
    return holds, f"block-2 weight on the adjective (uniform share {uniform:.3f}): {shown}"


def _fetches(maps: Maps) -> tuple[bool, str]:
    crossed = {adj: m.blocks[1] for adj, m in maps.items() if adj in CROSSED}
    shown = ", ".join(
        f"{adj} {row[SECOND_NOUN]:.2f} vs {row[FIRST_NOUN]:.2f}" for adj, row in crossed.items()
    )
    holds = bool(crossed) and all(row[SECOND_NOUN] > row[FIRST_NOUN] for row in crossed.values())
    return holds, f"block-2 weight on the second vs the first noun: {shown}"


def _claims() -> list[tuple[str, str, str, Rule, str]]:
    leaky_avg = acc("leaky", "average")
    return [
        (
            "E16.1",
            "E16",
            "on the leaky task the bag-of-words average beats the transformer",
            all_of(
                *(
                    greater(leaky_avg, acc("leaky", m), on="difference")
                    for m in ("one-block", "two-blocks")
                )
            ),
            "'beats': a higher held-out accuracy than the one-block and two-block models, "
            "paired by seed",
        ),
        (
            "E17.1",
            "E17",
            "on the closed task the average falls below chance",
            below_chance(acc("closed", "average"), acc("closed", "average", "winograd/sentences")),
            "'chance': 50 %, one of the sentence's two nouns at random; 'below': significantly, "
            "a one-sided binomial p under 0.05 (review: was any accuracy under 0.5, which called "
            "0.4917 of 240 answers below chance). Seeds score the same sentences, so pooling "
            "counts each sentence once per seed",
        ),
        (
            "E17.2",
            "E17",
            "the average answers the wrong noun half the time",
            in_range(acc("closed", "average", "winograd/wrong_noun"), 0.4, 0.6),
            "'half the time': a wrong-noun share between 40 % and 60 %",
        ),
        (
            "E17.3",
            "E17",
            "one block does well on the closed task",
            in_range(acc("closed", "one-block"), lo=0.8),
            "'does well': at least 80 % held-out accuracy",
        ),
        (
            "E17.4",
            "E17",
            "two blocks are near perfect on the closed task",
            in_range(acc("closed", "two-blocks"), lo=0.95),
            "'near perfect': at least 95 %",
        ),
        (
            "E17.5",
            "E17",
            "block 1 looks identical for every adjective",
            _block_rule(
                "total variation between any two adjectives' block-1 rows at most 0.05", _identical
            ),
            "'identical': at most 0.05 of the attention mass moves between any two adjectives",
        ),
        (
            "E17.6",
            "E17",
            "block 1 carries the first noun forward",
            _block_rule(
                "block 1's weight on the first noun above that on any other word, for "
                "every adjective",
                _first_noun,
            ),
            "'carries forward': the first noun gets the largest weight",
        ),
        (
            "E17.7",
            "E17",
            "block 2 reads the adjective",
            _block_rule(
                "block 2's weight on the adjective at least the uniform share, for every adjective",
                _reads_adjective,
            ),
            "'reads': at least as much weight as a uniform row would give (1/15)",
        ),
        (
            "E17.8",
            "E17",
            "for a crossed-thing adjective, block 2 fetches the other noun",
            _block_rule(
                "block 2's weight on the second noun above its weight on the first, for "
                "each of wet wide busy steep",
                _fetches,
            ),
            "'fetches the other noun': more weight on the second noun than on the first",
        ),
    ]


WINOGRAD_CLAIMS = _claims()
