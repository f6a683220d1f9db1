"""The sections of the Winograd task (E16, E17).

Held-out accuracy at the position after ``so the`` and the share of answers that name the
pair's other noun, per model, and the attention maps as heatmaps (rows: adjectives,
columns: the sentence's words up to the query).
"""

from __future__ import annotations

from attnlab.catalogue import Row, experiment
from attnlab.report import figures, trained
from attnlab.report.computed import stage_figures
from attnlab.report.content import (
    SPREAD_NOTE,
    Image,
    Section,
    spread_cell,
    table_if_any,
)
from attnlab.report.protocol import protocol
from attnlab.report.results import Results
from attnlab.report.winograd import ADJECTIVE, CROSSED, CROSSER, read_maps, source

SCORE_COLUMNS = (
    "winograd/acc",
    "winograd/wrong_noun",
    "winograd/neither",
    "winograd/acc_crosser",
    "winograd/acc_crossed",
)


def winograd(results: Results, section: Section) -> None:
    """E16 (leaky) or E17 (closed): scores per model, curves, and the attention maps."""
    entry = experiment(section.id)
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
    section.figures += trained.curves(
        results,
        {source(m.variant): m.label for m in models},
        f"{name}: training curves",
    )
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
        tokens[ADJECTIVE] = "{adj}"
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
