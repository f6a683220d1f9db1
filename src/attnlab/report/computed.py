"""The sections with no training: P0's corpus and the computed experiments.

Those are E03-E07, E10, E12, E14, E15 and E19. Their stages write one metrics JSON per
experiment, tidy TSV tables and sometimes their own figures; the report shows the tables
as they are, inlines those figures, and draws the E14 log-log plot itself only when the
cost stage drew none.
"""

from __future__ import annotations

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
from attnlab.report.results import Results

# Experiment -> (its TSV tables under the tables folder, their titles).
TABLES = {
    "E03": (("probes/e03_shuffle", "Each permutation of the window"),),
    "E04": (("probes/e04_averages", "The 6 x 6 averaging matrix and the three ways' max |diff|"),),
    "E05": (("probes/e05_dot_products", "Var(q.k) against d"),),
    "E06": (
        ("probes/e06_effective_tokens", "exp(entropy) of a row of 64 scores"),
        ("probes/e06_example_row", "One row, divided and undivided"),
    ),
    "E07": (("probes/e07_frozen_rows", "Softmax Jacobian trace and frozen rows"),),
    "E10": (("probes/e10_block_split", "Parameters of one block by component"),),
    "E12": (("probes/e12_equivariance", "attention(P x) vs P attention(x)"),),
    "E14": (("e14_cost", "One attention layer as n doubles"),),
    "E15": (("probes/e15_gpt2_small", "GPT-2 small by component"),),
    "E19": (("probes/e19_parity", "Our attention vs PyTorch's"),),
}


def corpus(results: Results, section: Section) -> None:
    """P0: the corpus and tokenizer every trained model reads."""
    record = results.record("corpus")
    section.protocol = [
        ("seed", params_line(results, "seed") or "not run"),
        ("budget scale", params_line(results, "budget.scale") or "not run"),
    ]
    if record:
        rows = tuple((key, cell(value)) for key, value in record.items())
        section.tables.append(Table("Tiny Shakespeare, byte-level BPE", ("measure", "value"), rows))


def computed(results: Results, section: Section) -> None:
    """A computed experiment: its tables, its stage's figures, the environment it ran in."""
    key = section.id.lower()
    source = "cost" if section.id == "E14" else f"probes/{key}"
    record = results.record(source)
    section.measured = source in results.metrics
    section.protocol = [("seed", params_line(results, "seed") or "not run")]
    if section.id == "E14":
        section.protocol += _cost_environment(results)
    else:
        section.protocol.append(("library versions (rendering environment)", library_versions()))
    for name, title in TABLES.get(section.id, ()):
        table = tsv_table(title, results.table(name))
        if table is not None:
            section.tables.append(table)
    if record and not section.tables:  # no table written: show the metrics file itself
        rows = tuple((name, cell(value)) for name, value in record.items())
        section.tables.append(Table(f"{source}.json", ("metric", "value"), rows))
    drawn = results.figures_of(f"{key}_")
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
