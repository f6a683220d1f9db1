"""What a study found against the catalogue's choice (the Sweeps of docs/catalogue.md).

Pure: it takes a study's trials (the rows of ``trials.csv``) and the catalogue's choice (the
study's variant's own value of every searched axis, and that variant's val/ppl where it was
measured under the study's protocol) and returns the answer as sentences plus the numbers
behind them. Only COMPLETE trials with a finite value are results: a pruned trial's value is
a curve point part-way through training and a failed one has none.

The rules are fixed here, before any full-length study ran:

- **near the best** (the ``dk`` question): the choice's val/ppl at most :data:`NEAR` (5 %)
  above the best completed trial's, the catalogue's margin for "matches" (E11.2);
- **rescued** (the ``warmup`` question): the best post-norm trial with at least
  :data:`RESCUE_WARMUP` warmup steps (E11's warmup) at most :data:`MATCHES` (5 %, E11.2's
  "matches") above the best pre-norm trial;
- **the preferred warmup** of a norm: the warmup of that norm's best trial, and the shortest
  warmup among its trials within :data:`MATCHES` of that best (as good, with less warmup).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from attnlab.report.rules import fmt

# "Near the best": the catalogue's one margin for "about the same perplexity" (E11.2's
# "matches", within 5 %). Fixed before any full-length study ran, not tuned to its result.
NEAR = 0.05
# E11.2's "matches": within 5 % (docs/catalogue.md, E11).
MATCHES = 0.05
# E11's warmup (variants norm-pre-warmup and norm-post-warmup): the story's rescue is 200 steps.
RESCUE_WARMUP = 200
COMPLETE = "COMPLETE"
# trials.csv's own columns; every other column is a searched parameter.
TRIAL_COLUMNS = (
    "number",
    "state",
    "value",
    "duration_s",
    "wandb_run_id",
    "worker",
    "retry_of",
    "note",
)


@dataclass(frozen=True)
class Trial:
    """One row of ``trials.csv``: its number, state, objective and searched values."""

    number: int
    state: str
    value: float | None
    params: Mapping[str, Any]
    run_id: str = ""

    @property
    def is_result(self) -> bool:
        """Whether this trial's value is a result: COMPLETE, with a finite objective."""
        return self.state == COMPLETE and self.value is not None and math.isfinite(self.value)


@dataclass(frozen=True)
class Choice:
    """The catalogue's choice for a study.

    Attributes:
        variant: The study's variant (``dk-128-scaled``).
        values: That variant's own value of every searched axis (``d_head: 128``).
        measured: The variant's val/ppl trained under the study's protocol (the mean over
            its seeds), or ``None`` where it was not measured at the study's budget.
        seeds: How many seeds ``measured`` is the mean of.
    """

    variant: str
    values: Mapping[str, Any]
    measured: float | None = None
    seeds: int = 0


@dataclass(frozen=True)
class Answer:
    """The answer in sentences, and the numbers behind them (by name)."""

    sentences: tuple[str, ...]
    numbers: dict[str, Any] = field(default_factory=dict)
    rules: tuple[str, ...] = ()


def parse_value(text: str) -> Any:
    """A searched value as ``trials.csv`` writes it: a bool, an int, a float, or text."""
    if text in ("True", "False"):
        return text == "True"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return text


def read_trials(rows: Sequence[Mapping[str, str]]) -> list[Trial]:
    """The trials of ``trials.csv``'s rows (an empty value cell: no value)."""
    trials = []
    for row in rows:
        value = row.get("value", "")
        trials.append(
            Trial(
                number=int(row["number"]),
                state=row.get("state", ""),
                value=float(value) if value else None,
                params={
                    k: parse_value(v) for k, v in row.items() if k not in TRIAL_COLUMNS and v != ""
                },
                run_id=row.get("wandb_run_id", ""),
            )
        )
    return trials


def _best(trials: Sequence[Trial]) -> Trial | None:
    return min(trials, key=lambda t: (t.value, t.number)) if trials else None


def _values(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{k} = {_word(v)}" for k, v in params.items())


def _word(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return fmt(value) if isinstance(value, int | float) else str(value)


def _trial(trial: Trial) -> str:
    return f"trial {trial.number} ({_values(trial.params)}; val/ppl {fmt(trial.value or 0.0)})"


def _choice_value(done: Sequence[Trial], choice: Choice) -> tuple[float | None, str]:
    """The choice's val/ppl and where it comes from: a trial with its values, or the variant."""
    same = _best([t for t in done if all(t.params.get(k) == v for k, v in choice.values.items())])
    if same is not None:
        return same.value, f"trial {same.number}, which has its values"
    if choice.measured is not None:
        seeds = f"mean of {choice.seeds} seeds" if choice.seeds > 1 else "one seed"
        return choice.measured, f"{choice.variant} trained under the same protocol, {seeds}"
    return None, ""


def _rank(done: Sequence[Trial], best: Trial, choice: Choice) -> tuple[list[str], dict]:
    value, source = _choice_value(done, choice)
    named = f"The catalogue's choice ({choice.variant}: {_values(choice.values)})"
    if value is None:
        return [
            f"{named} was not measured under this study's protocol: no completed trial has "
            "its values and its variant was not evaluated at the study's budget."
        ], {"choice/val_ppl": None}
    rank = 1 + sum(t.value < value for t in done)  # type: ignore[operator]
    over = value / (best.value or 1.0) - 1
    if over < 0:  # the variant's own runs beat every trial
        where = f"{fmt(-100 * over)} % below the best trial, {_trial(best)}"
    elif rank == 1:
        where = "the best"
    else:
        where = f"{fmt(100 * over)} % above the best, {_trial(best)}"
    return [
        f"{named}: val/ppl {fmt(value)} ({source}), rank {rank} of {len(done)} completed "
        f"trials: {where}."
    ], {"choice/val_ppl": value, "choice/rank": rank, "choice/over_best": over}


def _dk(done: Sequence[Trial], best: Trial, choice: Choice) -> tuple[list[str], dict]:
    divided = _best([t for t in done if t.params.get("scale_scores") is True])
    undivided = _best([t for t in done if t.params.get("scale_scores") is False])
    sentences = [
        f"Best with the division: {_trial(divided) if divided else 'no completed trial'}; "
        f"best without: {_trial(undivided) if undivided else 'no completed trial'}."
    ]
    numbers: dict[str, Any] = {
        "divided/best": divided.value if divided else None,
        "undivided/best": undivided.value if undivided else None,
    }
    value, _ = _choice_value(done, choice)
    if value is None:
        near = None
        sentences.append("Whether the story's d_k is near the best: not measured.")
    else:
        near = value <= (best.value or 0.0) * (1 + NEAR)
        verdict = "is near" if near else "is not near"
        sentences.append(
            f"The story's d_k ({_values(choice.values)}) {verdict} the best (rule: at most "
            f"{fmt(100 * NEAR)} % above the best completed trial's val/ppl)."
        )
    numbers["choice/near_best"] = near
    return sentences, numbers


def _warmup_of(trial: Trial) -> int:
    return int(trial.params.get("warmup_steps", 0))


def _preferred(best: Trial, trials: Sequence[Trial]) -> tuple[int, int]:
    """``best``'s warmup, and the shortest warmup among ``trials`` within MATCHES of it."""
    close = [t for t in trials if (t.value or math.inf) <= (best.value or 0.0) * (1 + MATCHES)]
    return _warmup_of(best), min(_warmup_of(t) for t in close)


def _warmup(done: Sequence[Trial]) -> tuple[list[str], dict]:
    by_norm = {n: [t for t in done if t.params.get("norm") == n] for n in ("pre", "post")}
    sentences, numbers = [], {}
    for norm, trials in by_norm.items():
        best = _best(trials)
        numbers[f"{norm}/best"] = best.value if best else None
        if best is None:
            numbers[f"{norm}/preferred_warmup"] = None
            sentences.append(f"Best {norm}-norm trial: none completed.")
            continue
        at, shortest = _preferred(best, trials)
        numbers[f"{norm}/preferred_warmup"] = at
        numbers[f"{norm}/shortest_close_warmup"] = shortest
        sentences.append(
            f"Best {norm}-norm trial: {_trial(best)}; the study prefers {at} warmup steps "
            f"for {norm}-norm (the shortest within {fmt(100 * MATCHES)} % of that best: "
            f"{shortest})."
        )
    pre = _best(by_norm["pre"])
    warmed = _best([t for t in by_norm["post"] if _warmup_of(t) >= RESCUE_WARMUP])
    rule = (
        f"(rule: the best post-norm trial with at least {RESCUE_WARMUP} warmup steps at most "
        f"{fmt(100 * MATCHES)} % above pre-norm's best, E11.2's 'matches')"
    )
    if pre is None or warmed is None:
        missing = "pre-norm" if pre is None else f"post-norm with warmup >= {RESCUE_WARMUP}"
        numbers["rescued"] = None
        sentences.append(f"Whether warmup rescues post-norm: no completed {missing} trial {rule}.")
        return sentences, numbers
    ratio = (warmed.value or 0.0) / (pre.value or 1.0)
    numbers.update({"rescued": ratio <= 1 + MATCHES, "rescued/ratio": ratio})
    verdict = "reaches" if ratio <= 1 + MATCHES else "does not reach"
    sentences.append(
        f"With at least {RESCUE_WARMUP} warmup steps post-norm {verdict} pre-norm's best: "
        f"{_trial(warmed)} is {ratio:.3f} times it {rule}."
    )
    return sentences, numbers


def answer(trials: Sequence[Trial], choice: Choice) -> Answer:
    """What the study's completed trials say about the catalogue's ``choice``.

    Every study gets the choice's rank among the completed trials; a study that searches
    ``scale_scores`` also gets the best divided and undivided trials and whether the
    choice is near the best; one that searches ``norm`` and ``warmup_steps`` gets the best
    trial of each norm, its preferred warmup, and whether warmup rescues post-norm.
    """
    done = [t for t in trials if t.is_result]
    best = _best(done)
    if best is None:
        return Answer(
            (f"No trial completed ({len(trials)} recorded): the study has no answer yet.",),
            {"completed": 0},
        )
    sentences, numbers = _rank(done, best, choice)
    numbers.update({"completed": len(done), "best/val_ppl": best.value, "best/trial": best.number})
    rules = ["Only COMPLETE trials are results (a pruned trial's value is a curve point)."]
    axes = {k for t in trials for k in t.params}
    if "scale_scores" in axes:
        more, found = _dk(done, best, choice)
        sentences += more
        numbers.update(found)
        rules.append(
            f"'Near the best': at most {fmt(100 * NEAR)} % above the best completed trial's "
            "val/ppl (the catalogue's margin for 'matches', E11.2), fixed before any "
            "full-length study ran."
        )
    if {"norm", "warmup_steps"} <= axes:
        more, found = _warmup(done)
        sentences += more
        numbers.update(found)
        rules.append(
            f"'Rescued': the best post-norm trial with at least {RESCUE_WARMUP} warmup steps "
            f"(E11's) at most {fmt(100 * MATCHES)} % above pre-norm's best (E11.2's "
            "'matches'), fixed before any full-length study ran."
        )
    return Answer(tuple(sentences), numbers, tuple(rules))


def cost(best: Mapping[str, Any]) -> str:
    """The study's cost in words, from ``best.json``: trials by state and the seconds spent."""
    counts = best.get("trials")
    if not isinstance(counts, dict):
        return "not recorded"
    ran = sum(counts.get(s, 0) for s in ("COMPLETE", "PRUNED", "FAIL"))
    text = (
        f"{ran} trials run of {counts.get('target', '?')} asked for: "
        f"{counts.get('COMPLETE', 0)} complete, {counts.get('PRUNED', 0)} pruned, "
        f"{counts.get('FAIL', 0)} failed"
    )
    spent = best.get("cost")
    if not isinstance(spent, dict):
        return text + "; time not recorded"
    workers = (best.get("protocol") or {}).get("workers")
    by = f" by {workers} worker(s)" if workers else ""
    return (
        f"{text}; {fmt(spent.get('trial_s', 0.0))} s of training summed over trials, "
        f"{fmt(spent.get('wall_s', 0.0))} s wall from the first start to the last end{by}"
    )
