"""Every claim of docs/catalogue.md as data, and its verdict computed from the measurements.

Each claim carries the catalogue's own words, the rule that decides it (the measurements
it needs and a threshold stated in numbers) and ``reading``: how the threshold reads the
story's words ("about four times", "barely", "a wide margin"). No verdict is written by
hand: :func:`judge` says *holds*, *does not hold* or *inconclusive* from the numbers by the
rule's named test (:mod:`attnlab.report.rules`), or *not run* when a measurement is
missing. The thresholds were fixed before any result was looked at and reviewed once,
before any several-seed result existed (docs/catalogue.md, How a claim is decided); each
change is written beside its rule ("review:"). Shared words keep one reading throughout:

- "beats", "helps", "degrades": the paired interval wholly on the claim's side of 1
  (review: was "at least 1 % lower", a margin that stood in for one seed's noise; the
  interval now states that noise, so the margin went);
- "a wide / large margin": at least 10 % lower perplexity (a size, kept);
- "float noise": at most 1e-5 absolute (float32 rounding on values of order one).
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
    greater,
    in_range,
    lowest,
    ratio_in,
)
from attnlab.report.winograd_claims import WINOGRAD_CLAIMS

NOT_RUN = "not run"
STATUSES = (HOLDS, FAILS, INCONCLUSIVE, NOT_RUN)
BEATS = 1.0  # "beats", "helps": the paired ratio's interval wholly below 1 (review: was 0.99)
WIDE = 0.90  # "a wide / large margin": at least 10 % lower perplexity
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
        return tuple(dict.fromkeys(
            variant_of(ref.source) for ref in self.claim.rule.needs if not ref.exact))


def variant_of(source: str) -> str:
    """The variant a metrics source belongs to (``ladder-mlp/eval`` -> ``ladder-mlp``)."""
    return source.removeprefix("winograd/").removesuffix("/eval").removesuffix("/train")


def ppl(variant: str, key: str = "val/ppl", label: str | None = None) -> Ref:
    """A perplexity of ``variant``'s evaluation (``reports/metrics/<variant>/eval.json``)."""
    row = variant.split("-", 1)[1]
    return Ref(f"{variant}/eval", key, label or f"ppl({row})")


def _stat(variant: str, when: str, stat: str, label: str) -> Ref:
    # E09 keys are per block and head; the mean over them (one head, one block here).
    return Ref(f"{variant}/eval", f"{when}/{stat}/*", label)


_HELPS = ("'beats', 'helps': lower perplexity than the rung above, the whole paired interval "
          "below 1 (review: was at least 1 % lower, a stand-in for one seed's noise)")


def _e02() -> list[Claim]:
    none, avg, pos = ppl("ladder-no-context"), ppl("ladder-average"), ppl("ladder-average-pos")
    res, replace = ppl("ladder-average-residual"), ppl("ladder-head-replace")
    head, four = ppl("ladder-head-residual"), ppl("ladder-four-heads")
    mlp, norm = ppl("ladder-mlp"), ppl("ladder-layernorm")
    c = "E02"
    return [
        Claim("E02.1", c, "averaging makes the model about four times worse than no context",
              ratio_in(avg, none, 2.5, 6.4), "'about four times': within a factor 1.6 of 4"),
        Claim("E02.2", c, "positions before the mean barely help",
              ratio_in(pos, avg, 0.90, 1.01),
              "'barely help': under 10 % lower perplexity, and not more than 1 % higher"),
        Claim("E02.3", c, "the residual repairs it", ratio_in(res, none, hi=1.10),
              "'repairs': back within 10 % of the no-context model"),
        Claim("E02.4", c, "the uniform mean then adds nothing over no context",
              ratio_in(res, none, lo=0.95), "'adds nothing': under 5 % lower perplexity"),
        Claim("E02.5", c, "learned weights beat uniform ones by a wide margin",
              ratio_in(head, res, hi=WIDE),
              "'wide margin': at least 10 % lower; the two rows differ only in the mixer"),
        # E02.6-E02.9: each rung against the rung right above it (item: paired rungs).
        Claim("E02.6", c, "a head added beats the same head replacing",
              ratio_in(head, replace, hi=BEATS, strict=True), _HELPS),
        Claim("E02.7", c, "four heads beat one", ratio_in(four, head, hi=BEATS, strict=True),
              _HELPS),
        Claim("E02.8", c, "the MLP helps", ratio_in(mlp, four, hi=BEATS, strict=True), _HELPS),
        Claim("E02.9", c, "LayerNorm helps", ratio_in(norm, mlp, hi=BEATS, strict=True),
              _HELPS),
    ]


def _e08_e09() -> list[Claim]:
    short = {d: (ppl(f"dk-{d}-scaled", label=f"ppl(d_k={d}, divided)"),
                 ppl(f"dk-{d}-unscaled", label=f"ppl(d_k={d}, undivided)")) for d in (256, 1024)}
    block = (ppl("dk-block-32-scaled", label="ppl(d_k=32, divided)"),
             ppl("dk-block-32-unscaled", label="ppl(d_k=32, undivided)"))
    std_init = _stat("dk-1024-unscaled", "init", "scores/std", "undivided score std at init")
    std = _stat("dk-1024-unscaled", "trained", "scores/std", "undivided score std trained")
    entropy = _stat("dk-1024-unscaled", "trained", "attn/entropy", "undivided entropy (nats)")
    onehot_init = _stat("dk-1024-unscaled", "init", "attn/onehot_frac",
                        "undivided one-hot share at init")
    onehot = _stat("dk-1024-unscaled", "trained", "attn/onehot_frac",
                   "undivided one-hot share trained")
    soft = _stat("dk-1024-scaled", "trained", "attn/onehot_frac", "divided one-hot share")
    soft_entropy = _stat("dk-1024-scaled", "trained", "attn/entropy", "divided entropy (nats)")
    return [
        Claim("E08.1", "E08", "at d_k = 32 the division is worth nothing "
              "(the run without may even be slightly ahead)",
              ratio_in(block[1], block[0], hi=1.02),
              "'worth nothing': without the division at most 2 % worse, or ahead"),
        *(Claim(f"E08.{i}", "E08", f"at d_k = {d} the division is worth a large margin",
                ratio_in(short[d][0], short[d][1], hi=WIDE),
                "'large margin': the division gives at least 10 % lower perplexity")
          for i, d in ((2, 256), (3, 1024))),
        Claim("E09.1", "E09", "the undivided head runs away: its score std grows by orders "
              "of magnitude", ratio_in(std, std_init, lo=100.0),
              "'orders of magnitude': at least 100 times its value at initialisation"),
        Claim("E09.2", "E09", "the undivided head's entropy goes to 0", in_range(entropy, hi=0.1),
              "'-> 0': a mean row entropy under 0.1 nats (about 1.1 effective keys)"),
        Claim("E09.3", "E09", "~all of the undivided head's rows are one-hot",
              in_range(onehot, lo=0.9), "'~all': at least 90 % of rows with a weight > 0.99"),
        Claim("E09.4", "E09", "the undivided head stays collapsed",
              all_of(in_range(onehot, lo=0.9),
                     greater(onehot, onehot_init, or_equal=True, on="difference")),
              "'stays': as one-hot after training as at initialisation, and ~all rows"),
        Claim("E09.5", "E09", "the divided head stays a soft mixture",
              all_of(in_range(soft, hi=0.1), in_range(soft_entropy, lo=1.0)),
              "'soft mixture': at most 10 % one-hot rows and at least 1 nat of entropy"),
    ]


def _e11() -> list[Claim]:
    pre, pre_w = ppl("norm-pre"), ppl("norm-pre-warmup")
    post, post_w = ppl("norm-post"), ppl("norm-post-warmup")
    grad = {n: Ref(f"norm-{n}/eval", "grad_norm/ratio_last_first", f"grad last/first ({n})")
            for n in ("pre", "post")}
    return [
        Claim("E11.1", "E11", "post-norm without warmup is several times worse",
              ratio_in(post, pre, lo=2.0), "'several times': at least 2 times pre-norm's"),
        Claim("E11.2", "E11", "with warmup, post-norm matches pre-norm",
              ratio_in(post_w, pre_w, 0.95, 1.05), "'matches': within 5 %, both with warmup"),
        Claim("E11.3", "E11", "pre-norm needs no warmup", ratio_in(pre, pre_w, hi=1.05),
              "'needs no warmup': without it at most 5 % worse than with it"),
        Claim("E11.4", "E11", "post-norm's gradient norms grow more with depth",
              all_of(in_range(grad["post"], lo=1.0, strict=True),
                     greater(grad["post"], grad["pre"])),
              "'grow more with depth': post-norm's last/first block ratio at initialisation "
              "above 1 and above pre-norm's (review: above pre-norm's alone held with both "
              "ratios below 1, where neither grows)"),
    ]


def _e13() -> list[Claim]:
    methods = ("none", "learned", "sinusoidal", "rope", "alibi")
    at = {(m, n): ppl(f"positions-{m}", f"val/ppl@{n}", f"ppl@{n}({m})")
          for m in methods for n in (64, 128, 256)}
    others = tuple(at[m, 64] for m in methods if m != "learned")
    return [
        Claim("E13.1", "E13", "learned positions win at the training length",
              lowest(at["learned", 64], others), "'win': the lowest perplexity at 64"),
        Claim("E13.2", "E13", "learned positions then fall off a cliff",
              ratio_in(at["learned", 128], at["learned", 64], lo=2.0),
              "'a cliff': perplexity at least doubles at 128, the first length beyond"),
        Claim("E13.3", "E13", "sinusoidal positions do not extrapolate",
              ratio_in(at["sinusoidal", 256], at["sinusoidal", 64], lo=1.10),
              "'do not extrapolate': at least 10 % worse at 256 than at 64"),
        Claim("E13.4", "E13", "RoPE degrades without collapsing",
              ratio_in(at["rope", 256], at["rope", 64], lo=1.0, hi=2.0, strict=True),
              "'degrades': worse at 256, the whole interval above 1 (review: was over 1 % "
              "worse, a stand-in for one seed's noise); 'without collapsing': under the 2x "
              "cliff"),
        Claim("E13.5", "E13", "ALiBi improves beyond the training length",
              all_of(ratio_in(at["alibi", 128], at["alibi", 64], hi=1.0, strict=True),
                     ratio_in(at["alibi", 256], at["alibi", 64], hi=1.0, strict=True)),
              "'improves': lower perplexity at 128 and at 256 than at 64"),
    ]


def _e18() -> list[Claim]:
    return [
        Claim("E18.1", "E18", "two blocks are better than one on train",
              greater(ppl("depth-1", "train/ppl", "train ppl(1 block)"),
                      ppl("depth-2", "train/ppl", "train ppl(2 blocks)")),
              "'better': a lower train perplexity, by any amount"),
        Claim("E18.2", "E18", "two blocks are worse than one on validation (overfitting)",
              greater(ppl("depth-2", label="val ppl(2 blocks)"),
                      ppl("depth-1", label="val ppl(1 block)")),
              "'worse': a higher validation perplexity, by any amount"),
    ]


def _probe(experiment: str, key: str, label: str) -> Ref:
    # A probe is a computation with no seed to vary: one value, decided as a point.
    return Ref(f"probes/{experiment}", f"{experiment}/{key}", label, exact=True)


def _computed() -> list[Claim]:
    noise = f"'float noise': at most {NOISE:g} absolute"
    gpt2 = 124_439_808
    return [
        Claim("E03.1", "E03", "the causal mean's last row is unchanged by permuting the "
              "window (float noise only)",
              in_range(_probe("e03", "last_row_max_abs_diff", "max |diff|"), hi=NOISE), noise),
        Claim("E04.1", "E04", "loop, lower-triangular matmul and masked softmax give the "
              "same average",
              all_of(in_range(_probe("e04", "loop_vs_matmul", "loop vs matmul"), hi=NOISE),
                     in_range(_probe("e04", "loop_vs_softmax", "loop vs softmax"), hi=NOISE)),
              noise),
        Claim("E05.1", "E05", "Var(q.k) = d for unit-variance q and k (std = sqrt(d))",
              each_in_range(EachRef("probes/e05", "e05/var_over_d@", "Var/d", exact=True),
                            0.95, 1.05),
              "within 5 % of 1 at every d (20,000 pairs: about 1 % sampling error)"),
        Claim("E10.1", "E10", "the MLP holds two thirds of a block's parameters",
              each_in_range(EachRef("probes/e10", "e10/mlp_share@", "MLP share", exact=True),
                            2 / 3 - 0.01, 2 / 3 + 0.01),
              "'two thirds': within one percentage point of 2/3 at every width"),
        Claim("E12.1", "E12", "without positions and mask, attention(P x) = P attention(x)",
              in_range(_probe("e12", "max_abs_diff", "max |diff|"), hi=NOISE), noise),
        Claim("E14.1", "E14", "naive attention's time grows x4 per doubling of n (quadratic)",
              in_range(Ref("cost", "e14/naive/time_slope", "log-log slope", exact=True), 1.7, 2.3),
              "'x4 per doubling': a fitted exponent within 0.3 of 2"),
        Claim("E15.1", "E15", "GPT-2 small has 124,439,808 parameters, by formula and by "
              "counting a built module",
              all_of(in_range(_probe("e15", "total/formula", "formula"), gpt2, gpt2),
                     in_range(_probe("e15", "total/module", "module"), gpt2, gpt2)),
              "exactly equal"),
        Claim("E19.1", "E19", "our multi-head attention equals nn.MultiheadAttention and "
              "F.scaled_dot_product_attention",
              all_of(in_range(_probe("e19", "vs_nn_multihead_attention", "vs MHA"), hi=NOISE),
                     in_range(_probe("e19", "vs_sdpa", "vs SDPA"), hi=NOISE)), noise),
    ]


def _catalogue() -> tuple[Claim, ...]:
    claims = [*_e02(), *_computed(), *_e08_e09(), *_e11(), *_e13(), *_e18()]
    claims += [Claim(*entry) for entry in WINOGRAD_CLAIMS]
    order = {f"E{n:02d}": n for n in range(1, 20)}
    return tuple(sorted(claims, key=lambda c: (order[c.experiment], c.id)))


CLAIMS: tuple[Claim, ...] = _catalogue()


def judge(claim: Claim, results: Results) -> Verdict:
    """Decide ``claim`` from ``results``: *not run* unless every measurement it needs exists."""
    values = {ref: ref.get(results) for ref in claim.rule.needs}
    missing = [ref for ref, value in values.items() if value is None]
    if missing:
        shown = "; ".join(f"{ref.label} ({ref.where()})" for ref in missing)
        return Verdict(claim, NOT_RUN, f"missing: {shown}")
    try:
        outcome: Outcome = claim.rule.decide(values)
    except (ZeroDivisionError, ValueError) as err:
        return Verdict(claim, NOT_RUN, f"cannot be decided from these numbers: {err}")
    return Verdict(claim, outcome.status, outcome.numbers, outcome.n, outcome.interval,
                   outcome.seeds_needed)


def judge_all(results: Results, claims: tuple[Claim, ...] = CLAIMS) -> list[Verdict]:
    """Every claim's verdict, in the catalogue's order."""
    return [judge(claim, results) for claim in claims]
