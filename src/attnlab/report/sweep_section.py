"""The report's section of the Optuna sweeps (the Sweeps of docs/catalogue.md).

Per study: the answer about its reference trials and against the catalogue's choice
(decided by :func:`attnlab.verdicts.decide`, laid out here), what it cost, the best trial,
every trial with its W&B run, and the figures the sweep stage drew (Optuna's importances
and parallel coordinates first). Each study's best-trial check is a claim of the
catalogue (``sweeps.<study>``), shown with the section's claims like any other. The links
come from the report's params (``wandb``: where the runs are).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attnlab.report import figures
from attnlab.report.content import Cell, Image, Section, Table, cell, params_line
from attnlab.report.inputs import Results, Sweep
from attnlab.verdicts.decisions import Decisions
from attnlab.verdicts.number_format import fmt
from attnlab.verdicts.sweep_trials import Trial, read_trials

SWEEPS = "sweeps"  # the catalogue entry of the studies

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


def sweeps(results: Results, section: Section, decisions: Decisions) -> None:
    """Every study: the answer, its cost, the best trial, every trial, the figures."""
    section.measured = bool(results.sweeps)
    section.protocol = [
        ("seed", params_line(results, "seed") or "not run"),
        ("studies", ", ".join(results.sweeps) or "not run"),
    ]
    wandb = results.params.get("wandb") or {}
    for study, sweep in results.sweeps.items():
        recorded = sweep.best.get("protocol")
        if isinstance(recorded, dict):
            section.protocol += [(f"{study}: {k}", cell(v)) for k, v in _flat(recorded).items()]
        section.protocol.append((f"{study}: cost", cost(sweep.best)))
        trials = read_trials(sweep.trials)
        found = decisions.answers[study]
        section.tables.append(
            Table(
                f"{study}: the answer against the catalogue's choice",
                ("what the completed trials say",),
                tuple((s,) for s in found.sentences),
                " ".join(found.rules),
            )
        )
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
