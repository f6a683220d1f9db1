"""The sections of the trained experiments: E02, E08, E09, E11, E13 and E18.

Each reads ``<variant>/seed-<s>/train.json`` and ``.../eval.json`` of its rows (the rows
of its catalogue entry, :mod:`attnlab.catalogue`, with their labels) and the rows'
curves, and lays them out as the story's table with its figures: every value as its mean
over seeds with the 95 % interval, every bar with its seeds, every curve as the seeds'
mean and band. A row that was not trained shows ``not run``. A table that states its rows'
protocol (E11's depth and steps, E13's context) reads it from their recipes (the report's
params ``variants``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from attnlab.catalogue import Experiment, Row, experiment
from attnlab.report import figures
from attnlab.report.along_section import along_section
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


def _divided(row: Row) -> str:
    """An E08 row's name in its curves: its width, then scaled or unscaled."""
    return f"{row.label} {'scaled' if row.divided else 'unscaled'}"


def _pairs(rows: list[Row]) -> list[tuple[Row, Row]]:
    """E08's rows as (divided, undivided) pairs of one protocol and d_k, in order."""
    divided = [row for row in rows if row.divided]
    undivided = {(row.protocol, row.d_k): row for row in rows if not row.divided}
    return [(row, undivided[row.protocol, row.d_k]) for row in divided]


def _recipes(results: Results, rows: Sequence[Row]) -> list[dict[str, Any]]:
    """The resolved recipe (``model``, ``train``) of each of ``rows`` the params give."""
    given = results.params.get("variants") or {}
    return [given[row.variant] for row in rows if row.variant in given]


def _shared(
    recipes: list[dict[str, Any]], part: str, key: str, show: Callable[[Any], str] = str
) -> str:
    """The rows' value of ``part.key``, or their values in row order, joined by "or"."""
    return " or ".join(dict.fromkeys(show(recipe[part][key]) for recipe in recipes))


def _exponent(value: float) -> str:
    """A learning rate as the story writes it: 3e-3, not 0.003."""
    mantissa, exponent = f"{value:e}".split("e")
    return f"{float(mantissa):g}e{int(exponent)}"


def curves(results: Results, rows: dict[str, str], title: str) -> list[Image]:
    """Train loss and val/ppl against step for ``rows`` (curve owner -> label), if any."""
    found = {
        kind: {label: results.curve(owner, kind) for owner, label in rows.items()}
        for kind in ("train/loss", "val/ppl")
    }
    train = {label: runs for label, runs in found["train/loss"].items() if runs}
    val = {label: runs for label, runs in found["val/ppl"].items() if runs}
    if not train and not val:
        return []
    fig = figures.curves(train, val, title)
    caption = (
        f"Train loss per step as bucket means (at most {figures.MAX_POINTS} points per "
        "line), the mean over seeds with the seeds' min-max band (n seeds in the legend)"
    )
    if val:
        caption += "; val/ppl on the fixed validation subset scored during training"
    return [Image(title, figures.to_data_uri(fig), caption + ".")]


def ladder(results: Results, section: Section, entry: Experiment) -> None:
    """E02: the ladder's table, its bar chart and its curves."""
    ladder_rows = entry.rows
    variants = [row.variant for row in ladder_rows]
    section.protocol = protocol(results, variants)
    section.measured = measured(results, variants)
    base = results.per_seed(f"{variants[0]}/eval", "val/ppl")
    rows = []
    for row in ladder_rows:
        v = row.variant
        rows.append(
            (
                row.label,
                row.adds or "",
                cell(results.value(f"{v}/eval", "params/total"), ","),
                spread_cell(results.summary(f"{v}/train", "train/loss")),
                spread_cell(results.summary(f"{v}/eval", "train/ppl")),
                spread_cell(results.summary(f"{v}/eval", "val/ppl")),
                ratio_cell(results.per_seed(f"{v}/eval", "val/ppl"), base),
                spread_cell(results.summary(f"{v}/train", "wall_s"), ",.0f"),
            )
        )
    section.tables += table_if_any(
        "The ladder: each row adds one piece to the row above",
        (
            "row",
            "what it adds",
            "parameters",
            "train loss",
            "train ppl",
            "val ppl",
            f"x {ladder_rows[0].label}",
            "train wall s",
        ),
        rows,
        "train loss: mean of the last 5 % of steps; ppl: every validation token scored once. "
        + SPREAD_NOTE,
        labels=2,
    )
    values = [results.summary(f"{v}/eval", "val/ppl") for v in variants]
    if any(v is not None for v in values):
        fig = figures.bars(
            [row.label for row in ladder_rows],
            {"val ppl": values},
            "E02: validation perplexity, row by row",
            "val/ppl",
            log=True,
        )
        section.figures.append(Image("The ladder", figures.to_data_uri(fig)))
    section.figures += curves(results, {r.variant: r.label for r in ladder_rows}, "E02 curves")


def dk(results: Results, section: Section, entry: Experiment) -> None:
    """E08: each width with and without the division by sqrt(d_k)."""
    dk_rows = entry.rows
    variants = [row.variant for row in dk_rows]
    section.protocol = protocol(results, variants)
    section.measured = measured(results, variants)
    rows, with_div, without = [], [], []
    pairs = _pairs(dk_rows)
    for divided, undivided in pairs:
        a = results.summary(f"{divided.variant}/eval", "val/ppl")
        b = results.summary(f"{undivided.variant}/eval", "val/ppl")
        with_div.append(a)
        without.append(b)
        ratio = ratio_cell(
            *(results.per_seed(f"{r.variant}/eval", "val/ppl") for r in (undivided, divided))
        )
        rows.append((divided.protocol, str(divided.d_k), spread_cell(a), spread_cell(b), ratio))
    section.tables += table_if_any(
        "Validation perplexity with and without the division",
        (
            "protocol",
            "d_k",
            "val ppl, scores / sqrt(d_k)",
            "val ppl, undivided",
            "undivided / divided",
        ),
        rows,
        SPREAD_NOTE,
        labels=2,
    )
    if any(v is not None for v in with_div + without):
        labels = [f"{r.d_k}\n({(r.protocol or '').split(',')[0]})" for r, _ in pairs]
        fig = figures.bars(
            labels,
            {"divided": with_div, "undivided": without},
            "E08: the sqrt(d_k) effect per width",
            "val/ppl",
        )
        section.figures.append(Image("The sqrt(d_k) effect", figures.to_data_uri(fig)))
    section.figures += curves(results, {r.variant: _divided(r) for r in dk_rows}, "E08 curves")


def score_stats(results: Results, section: Section, entry: Experiment) -> None:
    """E09: score spread, entropy and one-hot rows at init and after training."""
    rows, std = [], {"init": [], "trained": []}
    labels = []
    # The table shows every E08 row that carries the statistics; the claims read its own.
    for row in experiment("E08").rows:
        src = f"{row.variant}/eval"
        got = {
            (w, k): results.summary(src, f"{w}/{k}/*")
            for w in ("init", "trained")
            for k in ("scores/std", "attn/entropy", "attn/onehot_frac")
        }
        if all(v is None for v in got.values()):
            continue
        labels.append(f"{row.label} {'/' if row.divided else 'no /'}")
        for when in std:
            std[when].append(got[when, "scores/std"])
        rows.append(
            (
                row.variant,
                str(row.d_k),
                "yes" if row.divided else "no",
                *(
                    spread_cell(got[w, k])
                    for k in ("scores/std", "attn/entropy", "attn/onehot_frac")
                    for w in ("init", "trained")
                ),
            )
        )
    variants = entry.variants
    section.protocol = protocol(results, variants)
    section.measured = measured(results, variants)
    header = (
        "variant",
        "d_k",
        "divided",
        "score std init",
        "score std trained",
        "entropy init",
        "entropy trained",
        "one-hot init",
        "one-hot trained",
    )
    section.tables += table_if_any(
        "Attention statistics on a fixed validation batch",
        header,
        rows,
        "Means over blocks and heads; entropy in nats. " + SPREAD_NOTE,
    )
    if rows:
        fig = figures.bars(
            labels,
            std,
            "E09: score std at init vs after training",
            "std of the causal scores",
            log=True,
        )
        section.figures.append(Image("Score std", figures.to_data_uri(fig)))
    along_section(results, section, entry)


def norms(results: Results, section: Section, entry: Experiment) -> None:
    """E11: pre- vs post-norm with and without warmup; gradient norm per block at init."""
    norm_rows = entry.rows
    variants = [row.variant for row in norm_rows]
    section.protocol = protocol(results, variants)
    section.measured = measured(results, variants)
    rows = [
        (
            r.label,
            spread_cell(results.summary(f"{r.variant}/eval", "val/ppl")),
            spread_cell(results.summary(f"{r.variant}/train", "train/loss")),
            spread_cell(results.summary(f"{r.variant}/eval", "grad_norm/ratio_last_first")),
        )
        for r in norm_rows
    ]
    recipes = _recipes(results, norm_rows)
    title = (
        f"{_shared(recipes, 'model', 'n_layer')} blocks, {_shared(recipes, 'train', 'steps')} "
        f"steps at lr {_shared(recipes, 'train', 'lr', _exponent)}"
        if recipes
        else section.title
    )
    section.tables += table_if_any(
        title,
        ("variant", "val ppl", "train loss", "grad norm last / first block (init)"),
        rows,
        SPREAD_NOTE,
    )
    grads = {}
    for r in norm_rows:
        record = results.record(f"{r.variant}/eval")
        blocks = sorted(k for k in record if k.startswith("grad_norm/block_"))
        if blocks:
            grads[r.label] = [results.summary(f"{r.variant}/eval", k) for k in blocks]
    if grads:
        depth = max(len(g) for g in grads.values())
        series = {n: g + [None] * (depth - len(g)) for n, g in grads.items()}
        fig = figures.lines(
            list(range(1, depth + 1)),
            series,
            "E11: gradient norm per block at initialisation",
            "block",
            "L2 norm of the block's gradient",
            logy=True,
        )
        section.figures.append(
            Image(
                "Gradient norm per block",
                figures.to_data_uri(fig),
                "The warmup rows share their init with the rows without.",
            )
        )
    along_section(results, section, entry)
    section.figures += curves(results, {r.variant: r.label for r in norm_rows}, "E11 curves")


def positions(results: Results, section: Section, entry: Experiment) -> None:
    """E13: perplexity against evaluation length per position method."""
    position_rows = entry.rows
    variants = [row.variant for row in position_rows]
    section.protocol = protocol(results, variants)
    section.measured = measured(results, variants)
    lengths = sorted(
        {
            int(k.split("@")[1])
            for v in variants
            for k in results.record(f"{v}/eval")
            if k.startswith("val/ppl@")
        }
    )
    table = {
        r.label: [results.summary(f"{r.variant}/eval", f"val/ppl@{n}") for n in lengths]
        for r in position_rows
    }
    rows = [(label, *(spread_cell(v) for v in values)) for label, values in table.items()]
    recipes = _recipes(results, position_rows)
    context = _shared(recipes, "model", "block_size")
    section.tables += table_if_any(
        f"Trained on {context} tokens, evaluated longer" if recipes else section.title,
        ("position", *(f"val ppl @{n}" for n in lengths)),
        rows,
        SPREAD_NOTE,
    )
    if any(v is not None for vs in table.values() for v in vs):
        fig = figures.lines(
            lengths,
            table,
            "E13: perplexity vs evaluation length",
            "evaluation length (tokens)",
            "val/ppl",
            logx=True,
            logy=True,
        )
        section.figures.append(Image("Length extrapolation", figures.to_data_uri(fig)))
    section.figures += curves(results, {r.variant: r.label for r in position_rows}, "E13 curves")


def depth(results: Results, section: Section, entry: Experiment) -> None:
    """E18: one block vs two, train and validation perplexity."""
    depth_rows = entry.rows
    variants = [row.variant for row in depth_rows]
    section.protocol = protocol(results, variants)
    section.measured = measured(results, variants)
    rows = []
    for row in depth_rows:
        v = row.variant
        train, val = (results.per_seed(f"{v}/eval", k) for k in ("train/ppl", "val/ppl"))
        rows.append(
            (
                row.label,
                spread_cell(results.summary(f"{v}/eval", "train/ppl")),
                spread_cell(results.summary(f"{v}/eval", "val/ppl")),
                ratio_cell(val, train),
            )
        )
    section.tables += table_if_any(
        "One block vs two",
        ("blocks", "train ppl", "val ppl", "val / train"),
        rows,
        SPREAD_NOTE,
    )
    section.figures += curves(results, {v: v for v in variants}, "E18 curves")
