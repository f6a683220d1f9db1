"""The section of a trained experiment that asks for no layout of its own.

Everything it shows comes from the experiment's catalogue entry: its rows (with their
labels), what the evaluate stage measures on them, its figures. One table of every row
(parameters, train loss, val/ppl and the ratio to the first row, each over seeds), the
measurements the entry lists along training, the figures its stages drew and the rows'
curves; its claims are the catalogue's, laid out beside it like every section's. A new
experiment with two variants and a claim needs no code here (docs/adding-an-experiment.md).
"""

from __future__ import annotations

from attnlab.catalogue import Experiment
from attnlab.report import figures
from attnlab.report.along_section import along_section
from attnlab.report.computed_sections import stage_figures
from attnlab.report.content import (
    SPREAD_NOTE,
    Image,
    Section,
    cell,
    ratio_cell,
    spread_cell,
    table_if_any,
)
from attnlab.report.inputs import Results
from attnlab.report.protocol_lines import measured, protocol
from attnlab.report.trained_sections import curves


def rows_table(results: Results, section: Section, entry: Experiment) -> None:
    """``entry``'s rows side by side, its stages' figures and the rows' curves."""
    variants = entry.variants
    section.protocol = protocol(results, variants)
    section.measured = measured(results, variants)
    if not variants:
        return
    base = results.per_seed(f"{variants[0]}/eval", "val/ppl")
    rows = [
        (
            row.label,
            cell(results.value(f"{row.variant}/eval", "params/total"), ","),
            spread_cell(results.summary(f"{row.variant}/train", "train/loss")),
            spread_cell(results.summary(f"{row.variant}/eval", "val/ppl")),
            ratio_cell(results.per_seed(f"{row.variant}/eval", "val/ppl"), base),
        )
        for row in entry.rows
    ]
    section.tables += table_if_any(
        f"{section.id}: every row",
        ("row", "parameters", "train loss", "val ppl", f"x {entry.rows[0].label}"),
        rows,
        "train loss: mean of the last 5 % of steps; ppl: every validation token scored once. "
        + SPREAD_NOTE,
    )
    along_section(results, section, entry)
    for path in stage_figures(results, entry):
        section.figures.append(
            Image(path.stem.replace("_", " "), figures.file_data_uri(path), path.name)
        )
    rows_by_variant = {row.variant: row.label for row in entry.rows}
    section.figures += curves(results, rows_by_variant, f"{section.id} curves")
