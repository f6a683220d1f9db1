"""What a decision is, as the report reads it: the verdicts' types, and no rule.

:func:`attnlab.verdicts.decide` returns a :class:`Decisions`: every claim's
:class:`Verdict` (the catalogue's claims, the sweeps' best-trial checks among them), each
claim again under its experiment's other protocols (:class:`Robustness`) and each
study's :class:`Answer`. The report lays these out; it imports this module and never a
rule, so what it shows is decided in one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from attnlab.verdicts.rules import Rule

HOLDS, FAILS, INCONCLUSIVE = "holds", "does not hold", "inconclusive"
NOT_RUN, STALE = "not run", "stale"
STATUSES = (HOLDS, FAILS, INCONCLUSIVE, STALE, NOT_RUN)


@dataclass(frozen=True)
class Awaited:
    """The runs a claim reads that are not current.

    Attributes:
        awaited: One line per run not current (``ladder-mlp seed 1338``).
        total: The runs the claim reads in all, current or not.
        left_out: How many of ``awaited`` were read and left out as stale (the rest are
            missing).
    """

    awaited: list[str]
    total: int
    left_out: int


@dataclass(frozen=True)
class Claim:
    """One claim of the catalogue: its words, the rule that decides it, and why so."""

    id: str
    experiment: str
    text: str
    rule: Rule
    reading: str


def variant_of(source: str) -> str:
    """The variant a metrics source belongs to (``ladder-mlp/eval`` -> ``ladder-mlp``)."""
    return source.removeprefix("winograd/").removesuffix("/eval").removesuffix("/train")


@dataclass(frozen=True)
class Verdict:
    """A claim's verdict (one of :data:`STATUSES`), its evidence, and what decided it.

    ``n`` is the number of seeds the decision rests on (``None``: an exact computation or
    not run), ``interval`` the deciding interval or p-value as printed, ``seeds_needed``
    (inconclusive only) about how many seeds at this spread would decide it.
    """

    claim: Claim
    status: str
    evidence: str
    n: int | None = None
    interval: str = ""
    seeds_needed: int | None = None

    @property
    def variants(self) -> tuple[str, ...]:
        """The trained variants the claim reads (more seeds of these would decide it)."""
        return tuple(
            dict.fromkeys(variant_of(ref.source) for ref in self.claim.rule.needs if not ref.exact)
        )


@dataclass(frozen=True)
class Robustness:
    """One claim under each protocol of its experiment, beside its main verdict.

    ``under``: its verdict under each protocol, by the protocol's choice, in the
    catalogue's order; ``reading``: where they differ from ``main``, in one line.
    """

    main: Verdict
    under: dict[str, Verdict]
    reading: str


@dataclass(frozen=True)
class Answer:
    """A study's answer in sentences, the numbers behind them (by name) and its rules."""

    sentences: tuple[str, ...]
    numbers: dict[str, Any] = field(default_factory=dict)
    rules: tuple[str, ...] = ()


@dataclass(frozen=True)
class Decisions:
    """Every decision of the record, as the report lays it out.

    Attributes:
        verdicts: Every claim of the catalogue, in its order (the sweeps' checks last).
        robustness: By experiment id, its claims under each of its other protocols.
        answers: By study, what its completed trials say against the catalogue's choice.
    """

    verdicts: list[Verdict]
    robustness: dict[str, list[Robustness]] = field(default_factory=dict)
    answers: dict[str, Answer] = field(default_factory=dict)
