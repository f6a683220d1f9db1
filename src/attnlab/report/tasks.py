"""The sections of the Winograd task (E16, E17) and of the Optuna sweeps.

Winograd: held-out accuracy at the position after ``so the`` and the share of answers
that name the pair's other noun, per model, and the attention maps as heatmaps (rows:
adjectives, columns: the sentence's words up to the query). Sweeps: each study's best
trial, its trials sorted by the objective, and one scatter per swept parameter.
"""

from __future__ import annotations

from attnlab.report import figures, trained
from attnlab.report.content import (
    SPREAD_NOTE,
    Image,
    Section,
    Table,
    cell,
    params_line,
    spread_cell,
    table_if_any,
)
from attnlab.report.protocol import protocol
from attnlab.report.results import Results
from attnlab.report.winograd import (
    ADJECTIVE,
    CROSSED,
    CROSSER,
    MODELS,
    TASKS,
    read_maps,
    source,
)

TOP_TRIALS = 10
SCORE_COLUMNS = (
    "winograd/acc",
    "winograd/wrong_noun",
    "winograd/neither",
    "winograd/acc_crosser",
    "winograd/acc_crossed",
)


def winograd(results: Results, section: Section) -> None:
    """E16 (leaky) or E17 (closed): scores per model, curves, and the attention maps."""
    task = "leaky" if section.id == "E16" else "closed"
    variants = [f"{task}-{m}" for m in MODELS]
    section.measured = any(source(task, m) in results.metrics for m in MODELS)
    section.protocol = protocol(results, variants, "winograd/train/{}", "winograd/{}")
    data = results.record("winograd/data").get(task)
    if isinstance(data, dict):
        section.protocol += [(f"data: {k}", str(v)) for k, v in data.items() if k != "vocabulary"]
    found = {
        k
        for m in MODELS
        for k in results.record(source(task, m))
        if k.startswith("winograd/") and results.value(source(task, m), k) is not None
    }
    # The story's two columns first, then the rest, the training split's last.
    keys = [k for k in SCORE_COLUMNS if k in found]
    keys += sorted(k for k in found - set(keys) if "/train_" not in k)
    keys += sorted(k for k in found - set(keys))
    keys = keys or list(SCORE_COLUMNS[:2])
    rows = [
        (MODELS[m], *(spread_cell(results.summary(source(task, m), k)) for k in keys))
        for m in MODELS
    ]
    section.tables += table_if_any(
        f"Held-out sentences, {TASKS[task]}",
        ("model", *(k.removeprefix("winograd/") for k in keys)),
        rows,
        "acc: the referent predicted after 'so the'; wrong_noun: the "
        "share of answers naming the pair's other noun; train_*: the "
        "same on the training sentences. " + SPREAD_NOTE,
    )
    section.figures += trained.curves(
        results,
        {f"winograd/{v}": MODELS[v.split("-", 1)[1]] for v in variants},
        f"{TASKS[task]}: training curves",
    )
    drawn = results.figures_of("winograd_") if task == "closed" else []
    for path in drawn:
        section.figures.append(
            Image(
                path.stem.replace("_", " "),
                figures.file_data_uri(path),
                f"Drawn by the Winograd stage: {path.name}",
            )
        )
    if not drawn:
        section.figures += _heatmaps(results, task)


def _heatmaps(results: Results, task: str) -> list[Image]:
    images = []
    for m in MODELS:
        maps = read_maps(results, source(task, m))
        if not maps:
            continue
        adjectives = [a for a in (*CROSSER, *CROSSED) if a in maps]
        tokens = list(maps[adjectives[0]].tokens)
        tokens[ADJECTIVE] = "{adj}"
        for b in range(len(maps[adjectives[0]].blocks)):
            fig = figures.heatmap(
                [maps[a].blocks[b] for a in adjectives],
                adjectives,
                tokens,
                f"{TASKS[task]}, {MODELS[m]}: block {b + 1}, query 'so the'",
            )
            images.append(
                Image(
                    f"{MODELS[m]}, block {b + 1}",
                    figures.to_data_uri(fig),
                    "Weights at the query position, averaged over heads; "
                    "crosser adjectives first, then crossed-thing ones.",
                )
            )
    return images


# trials.csv: these columns, then one column per searched parameter.
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


def sweeps(results: Results, section: Section) -> None:
    """The Optuna studies: best trial, best trials, and the objective per parameter."""
    section.measured = bool(results.sweeps)
    section.protocol = [
        ("seed", params_line(results, "seed") or "not run"),
        ("studies", ", ".join(results.sweeps) or "not run"),
    ]
    for study, sweep in results.sweeps.items():
        recorded = sweep.best.get("protocol")
        if isinstance(recorded, dict):
            section.protocol += [(f"{study}: {k}", cell(v)) for k, v in _flat(recorded).items()]
        best = {k: v for k, v in sweep.best.items() if k != "protocol"}
        if best:
            rows = tuple((k, cell(v)) for k, v in _flat(best).items())
            section.tables.append(Table(f"{study}: the best trial", ("field", "value"), rows))
        done = [t for t in sweep.trials if _objective(t) is not None]
        axes = [k for k in (sweep.trials[0] if sweep.trials else {}) if k not in TRIAL_COLUMNS]
        if done:
            best = sorted(done, key=lambda t: _objective(t) or 0.0)[:TOP_TRIALS]
            header = ("number", "state", "value", *axes)
            section.tables.append(
                Table(
                    f"{study}: the {len(best)} best of {len(sweep.trials)} trials",
                    header,
                    tuple(tuple(_short(t.get(k, "")) for k in header) for t in best),
                )
            )
        for path in sweep.figures:
            section.figures.append(
                Image(
                    f"{study}: {path.stem}",
                    figures.file_data_uri(path),
                    f"Drawn by the sweep stage: {path.name}",
                )
            )
        # Optuna's slice figure is the same objective-per-parameter view: drawn once.
        if done and not any("slice" in path.stem for path in sweep.figures):
            section.figures += _scatters(study, done, axes)


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


def _objective(trial: dict[str, str]) -> float | None:
    try:
        return float(trial.get("value", ""))
    except ValueError:
        return None


def _scatters(study: str, trials: list[dict[str, str]], axes: list[str]) -> list[Image]:
    images = []
    for axis in axes:
        pairs = []
        for t in trials:
            try:
                pairs.append((float(t[axis]), _objective(t) or 0.0))
            except (KeyError, ValueError):
                continue  # a categorical axis: Optuna's slice figure shows it
        if len(pairs) < 2:
            continue
        xs = [x for x, _ in pairs]
        logx = min(xs) > 0 and max(xs) / min(xs) >= 16
        fig = figures.scatter(
            xs,
            [y for _, y in pairs],
            f"{study}: objective vs {axis}",
            axis,
            "objective (val/ppl)",
            logx,
        )
        images.append(Image(f"{study}: {axis}", figures.to_data_uri(fig)))
    return images
