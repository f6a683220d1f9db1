"""Every claim of docs/catalogue.md as data, and its verdict computed from the measurements.

Each claim carries the catalogue's own words, the rule that decides it (the measurements
it needs and a threshold stated in numbers) and ``reading``: how the threshold reads the
story's words ("about four times", "barely", "a wide margin"). No verdict is written by
hand: :func:`judge` says *holds*, *does not hold* or *inconclusive* from the numbers by the
rule's named test (:mod:`attnlab.report.rules`), or *not run* when a measurement is
missing. The thresholds were fixed before any result was looked at and reviewed once,
before any several-seed result existed (docs/catalogue.md, How a claim is decided); each
change is written beside its rule ("review:"). The trained experiments' claims are in
:mod:`attnlab.report.trained_claims`, the Winograd ones in
:mod:`attnlab.report.winograd_claims`; the computed ones are here, where "float noise"
reads at most 1e-5 absolute (float32 rounding on values of order one).
"""

from __future__ import annotations

from dataclasses import dataclass

from attnlab.report.results import Results
from attnlab.report.rules import (
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    EachRef,
    Outcome,
    Ref,
    Rule,
    all_of,
    each_in_range,
    in_range,
)
from attnlab.report.trained_claims import TRAINED_CLAIMS
from attnlab.report.winograd_claims import WINOGRAD_CLAIMS

NOT_RUN = "not run"
STATUSES = (HOLDS, FAILS, INCONCLUSIVE, NOT_RUN)
NOISE = 1e-5  # "float noise only": max |diff| in float32


@dataclass(frozen=True)
class Claim:
    """One claim of the catalogue: its words, the rule that decides it, and why so."""

    id: str
    experiment: str
    text: str
    rule: Rule
    reading: str


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


def variant_of(source: str) -> str:
    """The variant a metrics source belongs to (``ladder-mlp/eval`` -> ``ladder-mlp``)."""
    return source.removeprefix("winograd/").removesuffix("/eval").removesuffix("/train")


def _probe(experiment: str, key: str, label: str) -> Ref:
    # A probe is a computation with no seed to vary: one value, decided as a point.
    return Ref(f"probes/{experiment}", f"{experiment}/{key}", label, exact=True)


def _computed() -> list[Claim]:
    noise = f"'float noise': at most {NOISE:g} absolute"
    gpt2 = 124_439_808
    return [
        Claim(
            "E03.1",
            "E03",
            "the causal mean's last row is unchanged by permuting the window (float noise only)",
            in_range(_probe("e03", "last_row_max_abs_diff", "max |diff|"), hi=NOISE),
            noise,
        ),
        Claim(
            "E04.1",
            "E04",
            "loop, lower-triangular matmul and masked softmax give the same average",
            all_of(
                in_range(_probe("e04", "loop_vs_matmul", "loop vs matmul"), hi=NOISE),
                in_range(_probe("e04", "loop_vs_softmax", "loop vs softmax"), hi=NOISE),
            ),
            noise,
        ),
        Claim(
            "E05.1",
            "E05",
            "Var(q.k) = d for unit-variance q and k (std = sqrt(d))",
            each_in_range(
                EachRef("probes/e05", "e05/var_over_d@", "Var/d", exact=True), 0.95, 1.05
            ),
            "within 5 % of 1 at every d (20,000 pairs: about 1 % sampling error)",
        ),
        Claim(
            "E10.1",
            "E10",
            "the MLP holds two thirds of a block's parameters",
            each_in_range(
                EachRef("probes/e10", "e10/mlp_share@", "MLP share", exact=True),
                2 / 3 - 0.01,
                2 / 3 + 0.01,
            ),
            "'two thirds': within one percentage point of 2/3 at every width",
        ),
        Claim(
            "E12.1",
            "E12",
            "without positions and mask, attention(P x) = P attention(x)",
            in_range(_probe("e12", "max_abs_diff", "max |diff|"), hi=NOISE),
            noise,
        ),
        Claim(
            "E14.1",
            "E14",
            "naive attention's time grows x4 per doubling of n (quadratic)",
            in_range(Ref("cost", "e14/naive/time_slope", "log-log slope", exact=True), 1.7, 2.3),
            "'x4 per doubling': a fitted exponent within 0.3 of 2",
        ),
        Claim(
            "E15.1",
            "E15",
            "GPT-2 small has 124,439,808 parameters, by formula and by counting a built module",
            all_of(
                in_range(_probe("e15", "total/formula", "formula"), gpt2, gpt2),
                in_range(_probe("e15", "total/module", "module"), gpt2, gpt2),
            ),
            "exactly equal",
        ),
        Claim(
            "E19.1",
            "E19",
            "our multi-head attention equals nn.MultiheadAttention and "
            "F.scaled_dot_product_attention",
            all_of(
                in_range(_probe("e19", "vs_nn_multihead_attention", "vs MHA"), hi=NOISE),
                in_range(_probe("e19", "vs_sdpa", "vs SDPA"), hi=NOISE),
            ),
            noise,
        ),
    ]


def _catalogue() -> tuple[Claim, ...]:
    claims = _computed()
    claims += [Claim(*entry) for entry in (*TRAINED_CLAIMS, *WINOGRAD_CLAIMS)]
    order = {f"E{n:02d}": n for n in range(1, 20)}
    return tuple(sorted(claims, key=lambda c: (order[c.experiment], c.id)))


CLAIMS: tuple[Claim, ...] = _catalogue()


def judge(claim: Claim, results: Results) -> Verdict:
    """Decide ``claim`` from ``results``: *not run* unless every measurement it needs exists."""
    values = {ref: ref.get(results) for ref in claim.rule.needs}
    missing = [ref for ref, value in values.items() if value is None]
    if missing:
        shown = "; ".join(f"{ref.label} ({ref.where(results)})" for ref in missing)
        return Verdict(claim, NOT_RUN, f"missing: {shown}")
    try:
        outcome: Outcome = claim.rule.decide(values)
    except (ZeroDivisionError, ValueError) as err:
        return Verdict(claim, NOT_RUN, f"cannot be decided from these numbers: {err}")
    return Verdict(
        claim, outcome.status, outcome.numbers, outcome.n, outcome.interval, outcome.seeds_needed
    )


def judge_all(results: Results, claims: tuple[Claim, ...] = CLAIMS) -> list[Verdict]:
    """Every claim's verdict, in the catalogue's order."""
    return [judge(claim, results) for claim in claims]
