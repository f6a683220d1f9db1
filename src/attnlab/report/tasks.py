"""The sections of the Winograd task (E16, E17).

Held-out accuracy at the position after ``so the`` and the share of answers that name the
pair's other noun, per model, and the attention maps as heatmaps (rows: adjectives,
columns: the sentence's words up to the query).
"""

from __future__ import annotations

from attnlab.report import figures, trained
from attnlab.report.content import (
    SPREAD_NOTE,
    Image,
    Section,
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
