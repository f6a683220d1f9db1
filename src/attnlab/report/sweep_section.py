"""The report's section of the Optuna sweeps (the Sweeps of docs/catalogue.md).

Per study: the answer about its reference trials and against the catalogue's choice
(:mod:`attnlab.verdicts.sweep_answers`),
the verdict of its best-trial check (:mod:`attnlab.verdicts.sweep_check`),
what it cost, the best trial, every trial with its W&B run, and the figures the sweep stage
drew (Optuna's importances and parallel coordinates first). The catalogue's choice comes
from the report's params (``sweeps``: the study's variant, that variant's own value of
every searched axis and the study's reference trials; ``variants``: each variant's recipe,
for E11's warmup; ``wandb``: where the runs are, for the links).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attnlab.report import figures
from attnlab.report.content import Cell, Image, Section, Table, cell, params_line
from attnlab.report.inputs import Results, Sweep
from attnlab.report.verdict_text import status_cell
from attnlab.verdicts import Verdict
from attnlab.verdicts.number_format import fmt
from attnlab.verdicts.sweep_answers import answer
from attnlab.verdicts.sweep_check import check_verdict
from attnlab.verdicts.sweep_choice import Choice, measured_choice
from attnlab.verdicts.sweep_thresholds import rescue_warmup
from attnlab.verdicts.sweep_trials import Trial, read_trials

# Optuna's figures in the order a reader needs them, with what each one shows.
FIGURE_CAPTIONS = {
    "param_importances": "Optuna's importances (its default evaluator over the completed "
    "trials): how much each searched parameter matters to val/ppl.",
    "parallel_coordinate": "Every trial's parameters against its val/ppl (parallel coordinates).",
    "optimization_history": "val/ppl of each trial in order, and the best so far.",
    "slice": "val/ppl against each searched parameter.",
    "intermediate_values": "Each trial's val/ppl curve; the pruned ones stop early.",
}
OFFLINE_HINT = (
    "W&B runs by id, no link: runtime.wandb.entity (runtime.yaml) is empty (an offline run, or the "
    "API key's default entity). `wandb sync $ATTNLAB_RUN_ROOT/wandb/wandb/offline-run-*-<id>` "
    "(or under $WANDB_DIR/wandb) uploads an offline one."
)


def run_url(run_id: str, wandb: dict[str, Any]) -> str:
    """The W&B page of run ``run_id``, or ``""`` when the entity or project is unknown."""
    entity, project = wandb.get("entity"), wandb.get("project")
    return f"https://wandb.ai/{entity}/{project}/runs/{run_id}" if entity and project else ""


def choice_of(results: Results, study: str, sweep: Sweep) -> Choice:
    """The catalogue's choice for ``study`` as the params give it, with its own val/ppl.

    Its variant and values are the report's params (``sweeps``); the steps per trial its
    runs must have trained for, the study's recorded protocol.
    """
    given = (results.params.get("sweeps") or {}).get(study) or {}
    recorded = sweep.best.get("protocol") or {}
    variant = given.get("variant") or recorded.get("variant") or "its variant"
    return measured_choice(
        results, variant, given.get("choice") or {}, recorded.get("steps_per_trial")
    )


def sweeps(results: Results, section: Section) -> None:
    """Every study: the answer, its cost, the best trial, every trial, the figures."""
    section.measured = bool(results.sweeps)
    section.protocol = [
        ("seed", params_line(results, "seed") or "not run"),
        ("studies", ", ".join(results.sweeps) or "not run"),
    ]
    wandb = results.params.get("wandb") or {}
    warmup = rescue_warmup(results.params.get("variants") or {})
    for study, sweep in results.sweeps.items():
        recorded = sweep.best.get("protocol")
        if isinstance(recorded, dict):
            section.protocol += [(f"{study}: {k}", cell(v)) for k, v in _flat(recorded).items()]
        section.protocol.append((f"{study}: cost", cost(sweep.best)))
        trials = read_trials(sweep.trials)
        choice = choice_of(results, study, sweep)
        references = ((results.params.get("sweeps") or {}).get(study) or {}).get("references")
        found = answer(trials, choice, references or (), warmup)
        section.tables.append(
            Table(
                f"{study}: the answer against the catalogue's choice",
                ("what the completed trials say",),
                tuple((s,) for s in found.sentences),
                " ".join(found.rules),
            )
        )
        section.tables.append(check_table(study, check_verdict(results, study, choice.variant)))
        best = {k: v for k, v in sweep.best.items() if k not in ("protocol", "trials", "cost")}
        if best:
            rows = tuple((k, cell(v)) for k, v in _flat(best).items())
            section.tables.append(Table(f"{study}: the best trial", ("field", "value"), rows))
        if trials:
            section.tables.append(_trials_table(study, trials, sweep.trials, wandb))
        section.figures += _figures(study, sweep)
        # Optuna's slice figure is the same objective-per-parameter view: drawn once.
        if not any(path.stem == "slice" for path in sweep.figures):
            section.figures += _scatters(study, [t for t in trials if t.is_result])


def check_table(study: str, verdict: Verdict) -> Table:
    """The verdict of the study's best-trial check, beside the study's answer."""
    claim = verdict.claim
    return Table(
        f"{study}: the best trial checked under every seed",
        ("the claim", "test (threshold)", "verdict", "the numbers that decided it"),
        ((claim.text, claim.rule.test, status_cell(verdict), verdict.evidence),),
        f"{claim.reading}. The best trial's configuration is trained by "
        f"sweep-check@{study}-<seed> at the variant's full length, under the seeds of params "
        "seeds, and compared seed by seed with the variant's own runs.",
    )


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


def _trials_table(
    study: str, trials: list[Trial], rows: list[dict[str, str]], wandb: dict[str, Any]
) -> Table:
    """Every trial, the results first by val/ppl, then the rest by number; runs linked."""
    axes = list(dict.fromkeys(k for t in trials for k in t.params))
    order = sorted(
        zip(trials, rows, strict=True),
        key=lambda pair: (not pair[0].is_result, pair[0].value or 0.0, pair[0].number),
    )
    header = ("number", "state", "val/ppl", "duration_s", "W&B run", "note", *axes)
    body = tuple(
        (
            str(t.number),
            t.state,
            cell(t.value) if t.is_result else "",
            _short(row.get("duration_s", "")),
            Cell.of(t.run_id, href=run_url(t.run_id, wandb)) if t.run_id else "",
            row.get("note", ""),
            *(cell(t.params[axis]) if axis in t.params else "" for axis in axes),
        )
        for t, row in order
    )
    linked = run_url("x", wandb) != ""
    note = "val/ppl of COMPLETE trials only (a pruned trial's is a curve point). "
    return Table(
        f"{study}: all {len(trials)} trials", header, body, note + ("" if linked else OFFLINE_HINT)
    )


def _figures(study: str, sweep: Sweep) -> list[Image]:
    ranked = sorted(
        sweep.figures,
        key=lambda p: list(FIGURE_CAPTIONS).index(p.stem) if p.stem in FIGURE_CAPTIONS else 99,
    )
    return [
        Image(
            f"{study}: {path.stem}",
            figures.file_data_uri(path),
            FIGURE_CAPTIONS.get(path.stem, "Drawn by the sweep stage")
            + f" (drawn by the sweep stage: {path.name})",
        )
        for path in ranked
    ]


def _scatters(study: str, done: list[Trial]) -> list[Image]:
    images = []
    for axis in dict.fromkeys(k for t in done for k in t.params):
        pairs = [
            (float(t.params[axis]), t.value or 0.0)
            for t in done
            if isinstance(t.params.get(axis), int | float)
            and not isinstance(t.params[axis], bool)  # categorical: Optuna's slice shows it
        ]
        if len(pairs) < 2:
            continue
        xs = [x for x, _ in pairs]
        logx = min(xs) > 0 and max(xs) / min(xs) >= 16
        fig = figures.scatter(
            xs, [y for _, y in pairs], f"{study}: val/ppl vs {axis}", axis, "val/ppl", logx
        )
        images.append(Image(f"{study}: {axis}", figures.to_data_uri(fig)))
    return images


def _flat(record: dict, prefix: str = "") -> dict[str, object]:
    flat: dict[str, object] = {}
    for key, value in record.items():
        if isinstance(value, dict):
            flat.update(_flat(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _short(text: str) -> str:
    try:
        return cell(float(text)) if text else text
    except ValueError:
        return text
