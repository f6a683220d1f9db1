"""The sections with no training: P0's corpus and the computed experiments.

Those are E03-E07, E10, E12, E14, E15 and E19. Their stages write one metrics JSON per
experiment, tidy TSV tables and sometimes their own figures; the report shows the tables
as they are, inlines those figures, and draws the E14 log-log plot itself only when the
cost stage drew none.
"""

from __future__ import annotations

from pathlib import Path

from attnlab.catalogue import Experiment
from attnlab.report import figures
from attnlab.report.content import (
    Image,
    Section,
    Table,
    cell,
    library_versions,
    params_line,
    tsv_table,
)
from attnlab.report.inputs import Results


def corpus(results: Results, section: Section, entry: Experiment) -> None:
    """P0: the corpus and tokenizer every trained model reads."""
    record = results.record(entry.probe or "")
    section.protocol = [
        ("seed", params_line(results, "seed") or "not run"),
        ("budget scale", params_line(results, "budget.scale") or "not run"),
    ]
    if record:
        rows = tuple((key, cell(value)) for key, value in record.items())
        section.tables.append(Table("Tiny Shakespeare, byte-level BPE", ("measure", "value"), rows))


def computed(results: Results, section: Section, entry: Experiment) -> None:
    """A computed experiment: its tables, its stage's figures, the environment it ran in."""
    source = entry.probe or ""
    record = results.record(source)
    section.measured = source in results.metrics
    section.protocol = [("seed", params_line(results, "seed") or "not run")]
    if section.id == "E14":
        section.protocol += _cost_environment(results)
    else:
        section.protocol.append(("library versions (rendering environment)", library_versions()))
    for spec in entry.tables:
        table = tsv_table(spec.title, results.table(spec.file))
        if table is not None:
            section.tables.append(table)
    if record and not section.tables:  # no table written: show the metrics file itself
        rows = tuple((name, cell(value)) for name, value in record.items())
        section.tables.append(Table(f"{source}.json", ("metric", "value"), rows))
    drawn = stage_figures(results, entry)
    for path in drawn:
        section.figures.append(
            Image(
                path.stem.replace("_", " "),
                figures.file_data_uri(path),
                f"Drawn by the stage itself: {path.name}",
            )
        )
    if section.id == "E14" and not drawn:
        section.figures += _cost_figure(results)


def stage_figures(results: Results, entry: Experiment) -> list[Path]:
    """The figures ``entry``'s stages drew (its catalogue ``figures``) that exist, in order."""
    names = [Path(figure).name for figure in entry.figures]
    return [results.figures[name] for name in names if name in results.figures]


def _cost_environment(results: Results) -> list[tuple[str, str]]:
    """The environment the cost stage recorded: its one-level keys (``e14/torch``...)."""
    record = results.record("cost")
    return [
        (key.removeprefix("e14/").replace("_", " "), cell(value))
        for key, value in record.items()
        if key.count("/") == 1
    ]


def _cost_figure(results: Results) -> list[Image]:
    rows = [r for r in results.table("e14_cost") if r.get("status", "ok") == "ok"]
    by_impl: dict[str, dict[float, float]] = {}
    for row in rows:
        try:
            by_impl.setdefault(row["implementation"], {})[float(row["n"])] = float(row["total_ms"])
        except (KeyError, ValueError):
            continue
    if not by_impl:
        return []
    ns = sorted({n for points in by_impl.values() for n in points})
    series = {impl: [points.get(n) for n in ns] for impl, points in by_impl.items()}
    fig = figures.lines(
        ns,
        series,
        "E14: time of one attention layer",
        "n (tokens)",
        "forward time (ms)",
        logx=True,
        logy=True,
    )
    return [Image("Cost, log-log", figures.to_data_uri(fig))]
