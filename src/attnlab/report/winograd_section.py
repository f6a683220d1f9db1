"""The sections of the Winograd task (E16, E17).

Held-out accuracy at the position after ``so the`` and the share of answers that name the
pair's other noun, per model; that accuracy against training steps (a log axis: steps 0,
1, 2, 4, ... and the last); and the attention maps as heatmaps (rows: adjectives, columns:
the sentence's words up to the query).
"""

from __future__ import annotations

from attnlab.catalogue import Experiment, Row
from attnlab.catalogue.winograd import ADJECTIVE_POSITION
from attnlab.report import figures, trained_sections
from attnlab.report.computed_sections import stage_figures
from attnlab.report.content import (
    SPREAD_NOTE,
    Image,
    Section,
    Table,
    cell,
    spread_cell,
    table_if_any,
)
from attnlab.report.inputs import Point, Results
from attnlab.report.protocol_lines import protocol
from attnlab.verdicts.stats import Seed
from attnlab.verdicts.winograd_maps import CROSSED, CROSSER, read_maps

SCORE_COLUMNS = (
    "winograd/acc",
    "winograd/wrong_noun",
    "winograd/neither",
    "winograd/acc_crosser",
    "winograd/acc_crossed",
)


def source(variant: str) -> str:
    """The metrics file (under the metrics folder, no suffix) of one Winograd model."""
    return f"winograd/{variant}"


def accuracy_curve(results: Results, variant: str) -> dict[Seed, list[Point]]:
    """Per seed, the held-out accuracy along training of one Winograd model (empty if none).

    winograd-train writes it as ``winograd/<variant>/seed-<s>/accuracy.csv`` (step,
    accuracy) at steps 0, 1, 2, 4, ... and the last.
    """
    return results.curve(f"{source(variant)}/accuracy", "accuracy")


def winograd(results: Results, section: Section, entry: Experiment) -> None:
    """E16 (leaky) or E17 (closed): scores per model, curves, and the attention maps."""
    task, models = entry.task, entry.rows
    name = f"{section.id}, {task}"
    variants = entry.variants
    section.measured = any(source(m.variant) in results.metrics for m in models)
    section.protocol = protocol(results, variants, "winograd/train/{}", "winograd/{}")
    data = results.record("winograd/data").get(task)
    if isinstance(data, dict):
        section.protocol += [(f"data: {k}", str(v)) for k, v in data.items() if k != "vocabulary"]
    found = {
        k
        for m in models
        for k in results.record(source(m.variant))
        if k.startswith("winograd/") and results.value(source(m.variant), k) is not None
    }
    # The story's two columns first, then the rest, the training split's last.
    keys = [k for k in SCORE_COLUMNS if k in found]
    keys += sorted(k for k in found - set(keys) if "/train_" not in k)
    keys += sorted(k for k in found - set(keys))
    keys = keys or list(SCORE_COLUMNS[:2])
    rows = [
        (m.label, *(spread_cell(results.summary(source(m.variant), k)) for k in keys))
        for m in models
    ]
    section.tables += table_if_any(
        f"Held-out sentences, {name}",
        ("model", *(k.removeprefix("winograd/") for k in keys)),
        rows,
        "acc: the referent predicted after 'so the'; wrong_noun: the "
        "share of answers naming the pair's other noun; train_*: the "
        "same on the training sentences. " + SPREAD_NOTE,
    )
    section.figures += trained_sections.curves(
        results,
        {source(m.variant): m.label for m in models},
        f"{name}: training curves",
    )
    along = {m.label: accuracy_curve(results, m.variant) for m in models}
    section.tables += _accuracy_table(along, name)
    section.figures += _accuracy_figure(along, name)
    drawn = stage_figures(results, entry)
    for path in drawn:
        section.figures.append(
            Image(
                path.stem.replace("_", " "),
                figures.file_data_uri(path),
                f"Drawn by the Winograd stage: {path.name}",
            )
        )
    if not drawn:
        section.figures += _heatmaps(results, name, models)


def _heatmaps(results: Results, name: str, models: list[Row]) -> list[Image]:
    images = []
    for m in models:
        maps = read_maps(results, source(m.variant))
        if not maps:
            continue
        adjectives = [a for a in (*CROSSER, *CROSSED) if a in maps]
        tokens = list(maps[adjectives[0]].tokens)
        tokens[ADJECTIVE_POSITION] = "{adj}"
        for b in range(len(maps[adjectives[0]].blocks)):
            fig = figures.heatmap(
                [maps[a].blocks[b] for a in adjectives],
                adjectives,
                tokens,
                f"{name}, {m.label}: block {b + 1}, query 'so the'",
            )
            images.append(
                Image(
                    f"{m.label}, block {b + 1}",
                    figures.to_data_uri(fig),
                    "Weights at the query position, averaged over heads; "
                    "crosser adjectives first, then crossed-thing ones.",
                )
            )
    return images


def _accuracy_table(along: dict[str, dict[Seed, list[Point]]], name: str) -> list[Table]:
    """Held-out accuracy at each measured step, the first seed's, one row per model."""
    first = {label: next(iter(runs.values()), []) for label, runs in along.items()}
    steps = sorted({step for points in first.values() for step, _ in points})
    rows = [
        (label, *(cell(dict(points).get(step), ".2f") for step in steps))
        for label, points in first.items()
    ]
    return table_if_any(
        f"Held-out accuracy along training, {name}",
        ("model", *(f"step {step:g}" for step in steps)),
        rows,
        "The first seed's held-out accuracy, scored as the final score is, after that "
        "many updates (step 0: the initial weights); the last column is the table above's.",
    )


def _accuracy_figure(along: dict[str, dict[Seed, list[Point]]], name: str) -> list[Image]:
    """Held-out accuracy against steps for every model and seed; none when nothing ran."""
    if not any(along.values()):
        return []
    fig = figures.log_step_curves(
        along, f"{name}: held-out accuracy along training", "held-out accuracy", chance=0.5
    )
    return [
        Image(
            f"{name}: accuracy along training",
            figures.to_data_uri(fig),
            "Held-out accuracy after each number of updates (log axis), every seed (the "
            "first in bold); chance for a model that knows the answer is one of the two "
            "nouns is 0.5.",
        )
    ]
