"""The rules of E17's attention-map claims: what block 1 and block 2 of the maps show.

The claims themselves (their words, the model whose maps they read, the threshold) are in
the experiment catalogue (:mod:`attnlab.catalogue`); :data:`MAP_RULES` gives each rule's
logic by name. A map is the row of attention weights at the query position (the ``the``
after ``so``), per block, averaged over heads, for each of the eight adjectives
(:mod:`attnlab.verdicts.winograd_maps`). The maps stage draws one model (one seed), so these are
point decisions on that model.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from attnlab.catalogue.entries import Threshold
from attnlab.catalogue.winograd import ADJECTIVE_POSITION, X_POSITION, Y_POSITION
from attnlab.verdicts.number_format import fmt
from attnlab.verdicts.rules import FAILS, HOLDS, Measurements, Outcome, Ref, Rule, Values
from attnlab.verdicts.winograd_maps import CROSSED, Maps, read_maps

Check = Callable[[Maps], tuple[bool, str]]


@dataclass(frozen=True)
class MapsRef(Ref):
    """The attention maps of one Winograd model, by adjective (``None`` when not drawn).

    ``exact`` by default: the maps stage draws one model, decided as a point.
    """

    exact: bool = True

    def get(self, results: Measurements) -> Maps | None:
        """The maps, or ``None``."""
        return read_maps(results, self.source) or None

    def where(self, results: Measurements) -> str:
        """Where the maps are read from (one file, never an alias's)."""
        return f"the attention maps of {self.source}"


def _block_rule(source: str, test: str, check: Check) -> Rule:
    maps = MapsRef(source, "maps", "maps")

    def decide(values: Values) -> Outcome:
        holds, numbers = check(values[maps])
        return Outcome(HOLDS if holds else FAILS, numbers)

    return Rule((maps,), f"{test} (the one model the maps stage draws: a point decision)", decide)


def _identical(maps: Maps, limit: float) -> tuple[bool, str]:
    rows = {adj: m.blocks[0] for adj, m in maps.items()}
    distance = max(
        (0.5 * sum(abs(p - q) for p, q in zip(a, b, strict=True)), x, y)
        for (x, a), (y, b) in itertools.combinations(rows.items(), 2)
    )
    return distance[0] <= limit, (
        f"largest total-variation distance between two adjectives' block-1 rows: "
        f"{distance[0]:.3f} ({distance[1]} vs {distance[2]})"
    )


def _first_noun(maps: Maps) -> tuple[bool, str]:
    top = {
        adj: max(range(len(m.blocks[0])), key=m.blocks[0].__getitem__) for adj, m in maps.items()
    }
    wrong = sorted(adj for adj, position in top.items() if position != X_POSITION)
    weights = ", ".join(f"{adj} {maps[adj].blocks[0][X_POSITION]:.2f}" for adj in maps)
    return not wrong, f"block-1 weight on the first noun: {weights}" + (
        f"; largest elsewhere for {', '.join(wrong)}" if wrong else ""
    )


def _reads_adjective(maps: Maps) -> tuple[bool, str]:
    uniform = 1 / len(next(iter(maps.values())).blocks[1])
    weights = {adj: m.blocks[1][ADJECTIVE_POSITION] for adj, m in maps.items()}
    shown = ", ".join(f"{adj} {w:.2f}" for adj, w in weights.items())
    holds = all(w >= uniform for w in weights.values())
    return holds, f"block-2 weight on the adjective (uniform share {uniform:.3f}): {shown}"


def _fetches(maps: Maps) -> tuple[bool, str]:
    crossed = {adj: m.blocks[1] for adj, m in maps.items() if adj in CROSSED}
    shown = ", ".join(
        f"{adj} {row[Y_POSITION]:.2f} vs {row[X_POSITION]:.2f}" for adj, row in crossed.items()
    )
    holds = bool(crossed) and all(row[Y_POSITION] > row[X_POSITION] for row in crossed.values())
    return holds, f"block-2 weight on the second vs the first noun: {shown}"


def identical(source: str, threshold: Threshold) -> Rule:
    """Block 1's rows differ by at most ``threshold.hi`` total variation between adjectives."""
    if threshold.hi is None:
        raise ValueError("maps_identical needs its largest distance as the threshold's hi")
    test = f"total variation between any two adjectives' block-1 rows at most {fmt(threshold.hi)}"
    return _block_rule(source, test, partial(_identical, limit=threshold.hi))


def first_noun(source: str, threshold: Threshold) -> Rule:
    """Block 1's largest weight is on the first noun, for every adjective."""
    test = "block 1's weight on the first noun above that on any other word, for every adjective"
    return _block_rule(source, test, _first_noun)


def reads_adjective(source: str, threshold: Threshold) -> Rule:
    """Block 2 gives the adjective at least a uniform row's share, for every adjective."""
    test = "block 2's weight on the adjective at least the uniform share, for every adjective"
    return _block_rule(source, test, _reads_adjective)


def fetches(source: str, threshold: Threshold) -> Rule:
    """For a crossed-thing adjective, block 2 weighs the second noun above the first."""
    test = (
        "block 2's weight on the second noun above its weight on the first, for each of "
        + " ".join(CROSSED)
    )
    return _block_rule(source, test, _fetches)


# The rules by the name the catalogue gives them: (the maps' source, threshold) -> Rule.
MAP_RULES: dict[str, Callable[[str, Threshold], Rule]] = {
    "maps_identical": identical,
    "maps_first_noun": first_noun,
    "maps_reads_adjective": reads_adjective,
    "maps_fetches": fetches,
}
