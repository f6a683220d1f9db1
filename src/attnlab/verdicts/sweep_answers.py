"""What a study found against the catalogue's choice (the Sweeps of docs/catalogue.md).

Pure: it takes a study's trials (:class:`attnlab.verdicts.sweep_trials.Trial`, the rows of
``trials.csv``), the catalogue's choice (the study's variant's own value of every searched
axis, and that variant's val/ppl where it was measured under the study's protocol) and the
study's reference trials (params ``sweeps.studies.<study>.references``: the story's own
choices, run first as fixed trials), and returns the answer as sentences plus the numbers
behind them. Only COMPLETE trials with a finite value are results: a pruned trial's value is
a curve point part-way through training and a failed one has none.

The rules are fixed here, before any full-length study ran; their one margin is the
catalogue's for "about the same perplexity", E11.2's "matches" (a val/ppl at most
:func:`~attnlab.verdicts.sweep_thresholds.matches` times another's):

- **near the best** (the ``dk`` question, asked of the choice and of every reference): its
  val/ppl within that margin of the best completed trial's; a pruned reference is not
  near the best (the pruner stopped it for being worse than the median of the trials
  before it);
- **rescued** (the ``warmup`` question): a post-norm trial with at least E11's warmup steps
  (:func:`~attnlab.verdicts.sweep_thresholds.rescue_warmup`) within that margin of the best
  pre-norm trial; asked of the best such trial and of every such reference (a pruned one
  is not rescued);
- **the preferred warmup** of a norm: the warmup of that norm's best trial, and the shortest
  warmup among its trials within that margin of that best (as good, with less warmup).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from attnlab.verdicts.decisions import NOT_RUN, Answer
from attnlab.verdicts.number_format import fmt
from attnlab.verdicts.sweep_choice import Choice
from attnlab.verdicts.sweep_thresholds import matches
from attnlab.verdicts.sweep_trials import PRUNED, Trial


def _percent(ratio: float) -> str:
    """A ratio's distance above 1 in percent, as the rules print it (1.05: "5")."""
    return fmt(100 * (ratio - 1))


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


def _choice_trial(done: Sequence[Trial], choice: Choice) -> Trial | None:
    """The best completed trial that has the choice's values, if any."""
    return _best([t for t in done if all(t.params.get(k) == v for k, v in choice.values.items())])


def _choice_value(same: Trial | None, choice: Choice) -> tuple[float | None, str]:
    """The choice's val/ppl and its source: ``same`` (its trial), else the variant's runs."""
    if same is not None:
        return same.value, f"trial {same.number}, which has its values"
    if choice.measured is not None:
        seeds = f"mean of {choice.seeds} seeds" if choice.seeds > 1 else "one seed"
        return choice.measured, f"{choice.variant} trained under the same protocol, {seeds}"
    return None, ""


def _standing(done: Sequence[Trial], best: Trial, value: float) -> tuple[int, float, str]:
    """Where ``value`` stands among the completed trials: rank, share above the best, words."""
    rank = 1 + sum((t.value or 0.0) < value for t in done)
    over = value / (best.value or 1.0) - 1
    if over < 0:  # a variant's own runs can beat every trial
        where = f"{fmt(-100 * over)} % below the best trial, {_trial(best)}"
    elif rank == 1:
        where = "the best"
    else:
        where = f"{fmt(100 * over)} % above the best, {_trial(best)}"
    return rank, over, where


def _rank(done: Sequence[Trial], best: Trial, choice: Choice) -> tuple[list[str], dict]:
    same = _choice_trial(done, choice)
    value, source = _choice_value(same, choice)
    named = f"The catalogue's choice ({choice.variant}: {_values(choice.values)})"
    if value is None:
        return [
            f"{named} was not measured under this study's protocol: no completed trial has "
            "its values and its variant was not evaluated at the study's budget."
        ], {"choice/val_ppl": None}
    rank, over, where = _standing(done, best, value)
    # A value from the variant's own runs is not one of the trials: it ranks among n + 1.
    among = (
        f"rank {rank} of {len(done)} completed trials"
        if same is not None
        else f"rank {rank} of {len(done) + 1} with the {_count(len(done), 'completed trial')}"
    )
    return [f"{named}: val/ppl {fmt(value)} ({source}), {among}: {where}."], {
        "choice/val_ppl": value,
        "choice/rank": rank,
        "choice/over_best": over,
    }


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


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
    value, _ = _choice_value(_choice_trial(done, choice), choice)
    if value is None:
        near = None
        sentences.append("Whether the catalogue's choice is near the best: not measured.")
    else:
        near = value <= (best.value or 0.0) * matches()
        verdict = "is near" if near else "is not near"
        sentences.append(
            f"The catalogue's choice ({_values(choice.values)}) {verdict} the best (rule: at "
            f"most {_percent(matches())} % above the best completed trial's val/ppl)."
        )
    numbers["choice/near_best"] = near
    return sentences, numbers


def _warmup_of(trial: Trial) -> int:
    return int(trial.params.get("warmup_steps", 0))


def _preferred(best: Trial, trials: Sequence[Trial]) -> tuple[int, int]:
    """``best``'s warmup, and the shortest warmup among ``trials`` within matches() of it."""
    close = [t for t in trials if (t.value or math.inf) <= (best.value or 0.0) * matches()]
    return _warmup_of(best), min(_warmup_of(t) for t in close)


def _warmup(done: Sequence[Trial], rescue_warmup: int) -> tuple[list[str], dict]:
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
            f"for {norm}-norm (the shortest within {_percent(matches())} % of that best: "
            f"{shortest})."
        )
    pre = _best(by_norm["pre"])
    warmed = _best([t for t in by_norm["post"] if _warmup_of(t) >= rescue_warmup])
    rule = (
        f"(rule: the best post-norm trial with at least {rescue_warmup} warmup steps at most "
        f"{_percent(matches())} % above pre-norm's best, E11.2's 'matches')"
    )
    if pre is None or warmed is None:
        missing = "pre-norm" if pre is None else f"post-norm with warmup >= {rescue_warmup}"
        numbers["rescued"] = None
        sentences.append(f"Whether warmup rescues post-norm: no completed {missing} trial {rule}.")
        return sentences, numbers
    ratio = (warmed.value or 0.0) / (pre.value or 1.0)
    numbers.update({"rescued": ratio <= matches(), "rescued/ratio": ratio})
    verdict = "reaches" if ratio <= matches() else "does not reach"
    sentences.append(
        f"With at least {rescue_warmup} warmup steps post-norm {verdict} pre-norm's best: "
        f"{_trial(warmed)} is {ratio:.3f} times it {rule}."
    )
    return sentences, numbers


def _reference_trial(trials: Sequence[Trial], values: Mapping[str, Any]) -> Trial | None:
    """The trial that ran reference ``values``: its best result, else a pruned one, else any.

    A reference runs once, but a retry of a failed attempt has its values too.
    """
    ran = [t for t in trials if t.has(values)]
    pruned = [t for t in ran if t.state == PRUNED]
    return _best([t for t in ran if t.is_result]) or min(
        pruned or ran, key=lambda t: t.number, default=None
    )


def _unjudged(trial: Trial | None) -> str:
    """Why a reference has no val/ppl to judge: not run, pruned at its step, or unfinished."""
    if trial is None:
        return "not run (no trial of the study has its values)"
    if trial.state == PRUNED:
        step = f" at step {trial.pruned_at}" if trial.pruned_at is not None else ""
        return (
            f"trial {trial.number} was pruned{step} (its val/ppl curve was worse there than "
            "the median of the trials before it)"
        )
    return f"trial {trial.number} did not finish ({trial.state})"


def _references(
    trials: Sequence[Trial], done: Sequence[Trial], best: Trial, references: Sequence[Mapping]
) -> tuple[list[str], dict]:
    """Each reference trial's rank among the completed trials and whether it is near the best."""
    sentences, numbers = [], {}
    for index, values in enumerate(references):
        key, named = f"reference[{index}]", f"Reference {index} ({_values(values)})"
        trial = _reference_trial(trials, values)
        numbers[f"{key}/trial"] = trial.number if trial else None
        numbers[f"{key}/state"] = trial.state if trial else NOT_RUN
        if trial is None or not trial.is_result:
            near = False if trial and trial.state == PRUNED else None
            numbers[f"{key}/pruned_at"] = trial.pruned_at if trial else None
            verdict = "not near the best" if near is False else "not judged"
            sentences.append(f"{named}: {_unjudged(trial)}, so {verdict}.")
        else:
            value = trial.value or 0.0
            rank, over, where = _standing(done, best, value)
            near = value <= (best.value or 0.0) * matches()
            sentences.append(
                f"{named}: trial {trial.number}, val/ppl {fmt(value)}, rank {rank} of "
                f"{len(done)} completed trials, {where}: {'near' if near else 'not near'} the best."
            )
            numbers.update({f"{key}/val_ppl": value, f"{key}/rank": rank, f"{key}/over_best": over})
        numbers[f"{key}/near_best"] = near
    return sentences, numbers


def _rescues(
    trials: Sequence[Trial],
    done: Sequence[Trial],
    references: Sequence[Mapping],
    rescue_warmup: int,
) -> tuple[list[str], dict]:
    """Whether each post-norm reference with E11's warmup or more matches pre-norm's best."""
    pre = _best([t for t in done if t.params.get("norm") == "pre"])
    sentences, numbers = [], {}
    for index, values in enumerate(references):
        if values.get("norm") != "post" or int(values.get("warmup_steps", 0)) < rescue_warmup:
            continue
        asked = (
            f"Do {values['warmup_steps']} warmup steps rescue post-norm? "
            f"Reference {index} ({_values(values)})"
        )
        trial = _reference_trial(trials, values)
        if trial is None or not trial.is_result:
            rescued = False if trial and trial.state == PRUNED else None
            verdict = "not rescued" if rescued is False else "not judged"
            sentences.append(f"{asked}: {_unjudged(trial)}, so {verdict}.")
        elif pre is None:
            rescued = None
            sentences.append(
                f"{asked}: no completed pre-norm trial to compare it with, not judged."
            )
        else:
            ratio = (trial.value or 0.0) / (pre.value or 1.0)
            rescued = ratio <= matches()
            numbers[f"reference[{index}]/rescued/ratio"] = ratio
            sentences.append(
                f"{asked}: trial {trial.number}, val/ppl {fmt(trial.value or 0.0)}, is "
                f"{ratio:.3f} times pre-norm's best, {_trial(pre)}: "
                f"{'rescued' if rescued else 'not rescued'}."
            )
        numbers[f"reference[{index}]/rescued"] = rescued
    return sentences, numbers


def answer(
    trials: Sequence[Trial],
    choice: Choice,
    references: Sequence[Mapping[str, Any]] = (),
    rescue_warmup: int | None = None,
) -> Answer:
    """What the study's completed trials say about its ``references`` and the ``choice``.

    Every study gets each reference trial's rank among the completed trials and whether it
    is near the best (a pruned one is not; one that did not run is not judged), then the
    choice's rank; a study that searches ``scale_scores`` also gets the best divided and
    undivided trials and whether the choice is near the best; one that searches ``norm``
    and ``warmup_steps`` gets whether each post-norm reference with ``rescue_warmup``
    (E11's warmup steps) or more is rescued, the best trial of each norm, its preferred
    warmup, and whether the best post-norm trial with that warmup is rescued.

    Raises:
        ValueError: a study that searches ``norm`` and ``warmup_steps`` without
            ``rescue_warmup``.
    """
    done = [t for t in trials if t.is_result]
    best = _best(done)
    if best is None:
        return Answer(
            (f"No trial completed ({len(trials)} recorded): the study has no answer yet.",),
            {"completed": 0},
        )
    sentences, numbers = _references(trials, done, best, references)
    ranked, found = _rank(done, best, choice)
    sentences += ranked
    numbers.update(found)
    numbers.update({"completed": len(done), "best/val_ppl": best.value, "best/trial": best.number})
    rules = ["Only COMPLETE trials are results (a pruned trial's value is a curve point)."]
    if references:
        rules.append(
            "A reference is one of the story's own choices (params sweeps.studies.<study>."
            "references), run as a fixed trial before the sampled ones."
        )
    axes = {k for t in trials for k in t.params}
    if "scale_scores" in axes:
        more, found = _dk(done, best, choice)
        sentences += more
        numbers.update(found)
    if "scale_scores" in axes or references:
        rules.append(
            f"'Near the best': at most {_percent(matches())} % above the best completed trial's "
            "val/ppl (the catalogue's margin for 'matches', E11.2), fixed before any "
            "full-length study ran."
        )
    if {"norm", "warmup_steps"} <= axes and rescue_warmup is None:
        # A project that trims params variants may drop E11's rows, and with them the
        # warmup that 'rescued' is judged at: the study is answered without that verdict.
        rules.append(
            "'Rescued' is not judged: E11's rows, whose warmup it asks for, are not in "
            "params variants."
        )
    elif {"norm", "warmup_steps"} <= axes:
        rescues, found = _rescues(trials, done, references, rescue_warmup)
        more, found_too = _warmup(done, rescue_warmup)
        sentences += rescues + more
        numbers.update({**found, **found_too})
        rules.append(
            f"'Rescued': a post-norm trial with at least {rescue_warmup} warmup steps (E11's) "
            f"at most {_percent(matches())} % above pre-norm's best (E11.2's 'matches'), "
            "fixed before any full-length study ran; a pruned one is not."
        )
    return Answer(tuple(sentences), numbers, tuple(rules))
