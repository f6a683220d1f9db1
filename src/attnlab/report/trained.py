"""The sections of the trained experiments: E02, E08, E09, E11, E13 and E18.

Each reads ``<variant>/seed-<s>/train.json`` and ``.../eval.json`` of its rows (the variant
names of params.yaml, ``<experiment>-<row>``) and the rows' curves, and lays them out as
the story's table with its figures: every value as its mean over seeds with the 95 %
interval, every bar with its seeds, every curve as the seeds' mean and band. A row that was
not trained shows ``not run``.
"""

from __future__ import annotations

from collections.abc import Sequence

from attnlab.report import figures
from attnlab.report.content import (
    MISSING,
    SPREAD_NOTE,
    Image,
    Section,
    cell,
    library_versions,
    params_line,
    ratio_cell,
    spread_cell,
    table_if_any,
)
from attnlab.report.results import Results
from attnlab.report.stats import Seed

LADDER = (
    ("no-context", "token embedding -> linear to the vocab (a bigram model)"),
    ("average", "the embedding replaced by its causal running mean"),
    ("average-pos", "+ learned absolute positions before the mean"),
    ("average-residual", "the token kept and the mean added: x + mean(x)"),
    ("head-replace", "one learned head (d_head 128, no W_o) replacing the token"),
    ("head-residual", "the same head added to the token"),
    ("four-heads", "4 heads of width 32, mixed by W_o"),
    ("mlp", "+ per-position MLP 128 -> 512 -> 128, GELU, residual"),
    ("layernorm", "+ pre-norm LayerNorm: the full one-block transformer"),
)
DK_ROWS = (  # (protocol, d_k, variant stem)
    ("P0, 4 heads", 32, "dk-block-32"),
    ("P0, 1 head", 128, "dk-block-128"),
    ("short, 1 head, no LN", 128, "dk-128"),
    ("short, 1 head, no LN", 256, "dk-256"),
    ("short, 1 head, no LN", 1024, "dk-1024"),
)
NORMS = ("pre", "pre-warmup", "post", "post-warmup")
POSITIONS = ("none", "learned", "sinusoidal", "rope", "alibi")


def protocol(
    results: Results, variants: Sequence[str], train: str = "{}/train", evaluation: str = "{}/eval"
) -> list[tuple[str, str]]:
    """The protocol lines of a trained experiment, read from its rows' metrics files.

    ``train`` and ``evaluation`` name a row's metrics files (``{}`` is the variant).
    """
    runs = {
        (v, seed): record
        for v in variants
        for seed, record in results.metrics.get(train.format(v), {}).items()
    }
    evals = [
        record
        for v in variants
        for record in results.metrics.get(evaluation.format(v), {}).values()
    ]
    trained = {v for v, _ in runs}
    lines = [("rows trained", f"{len(trained)} of {len(variants)}")]
    if not runs and not evals:
        return lines

    def distinct(key: str) -> str:
        return ", ".join(sorted({cell(r[key]) for r in runs.values() if key in r})) or MISSING

    seeds = {seed for _, seed in runs if seed is not None}
    per_row = sorted({sum(1 for w, _ in runs if w == v) for v in trained})
    lines.append(
        (
            "seeds per row",
            ", ".join(map(str, per_row))
            + (f" (seeds {', '.join(map(str, sorted(seeds)))})" if seeds else ""),
        )
    )
    wall = sum(float(r.get("wall_s", 0.0)) for r in runs.values())
    eval_walls = [float(e["wall_s"]) for e in evals if isinstance(e.get("wall_s"), int | float)]
    evaluation_wall = f", evaluation {sum(eval_walls):,.0f} s" if eval_walls else ""
    # A run that records its budget scale and seed is believed over params.yaml.
    recorded = {key: distinct(key) for key in ("budget_scale", "seed")}
    lines += [
        (
            "budget scale",
            recorded["budget_scale"]
            if recorded["budget_scale"] != MISSING
            else params_line(results, "budget.scale") or MISSING,
        ),
        ("steps", distinct("steps")),
        ("tokens seen per row", distinct("tokens_seen")),
        (
            "seed",
            recorded["seed"]
            if recorded["seed"] != MISSING
            else params_line(results, "seed") or MISSING,
        ),
        (
            "hardware",
            f"{distinct('device')}; precision {distinct('precision')}; "
            f"world size {distinct('world_size')}",
        ),
        ("wall time, all rows and seeds", f"training {wall:,.0f} s{evaluation_wall}"),
        ("library versions (rendering environment)", library_versions()),
        ("provenance", provenance(runs)),
    ]
    sentences = {
        s for e in evals if isinstance(e.get("protocol"), dict) for s in e["protocol"].values()
    }
    lines += [("measured", s) for s in sorted(sentences)]
    return lines


def provenance(runs: dict[tuple[str, Seed], dict]) -> str:
    """Where each row's numbers came from: commit, DVC experiment and W&B run per run.

    ``runs`` is keyed by (variant, seed). Rows are grouped by commit and experiment
    (usually one group for the whole table).
    """
    groups: dict[str, list[str]] = {}
    for (name, seed), run in runs.items():
        variant = name if seed is None else f"{name} seed {seed}"
        origin = run.get("provenance")
        if not isinstance(origin, dict):
            groups.setdefault("not recorded (trained before provenance was kept)", []).append(
                variant
            )
            continue
        commit = origin.get("git_commit") or "unknown"
        where = f"commit {commit[:12]}" + (" with local changes" if origin.get("git_dirty") else "")
        where += f", DVC experiment {origin.get('dvc_experiment') or 'none (dvc repro)'}"
        groups.setdefault(where, []).append(f"{variant} {origin.get('wandb_run') or 'no W&B run'}")
    return "; ".join(f"{where}: {', '.join(rows)}" for where, rows in groups.items())


def measured(results: Results, variants: Sequence[str]) -> bool:
    """Whether any of ``variants`` was trained or evaluated."""
    return any(f"{v}/{k}" in results.metrics for v in variants for k in ("train", "eval"))


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
        "Train loss per step as bucket means (at most 300 points per line), the mean "
        "over seeds with the seeds' min-max band (n seeds in the legend)"
    )
    if val:
        caption += "; val/ppl on the fixed validation subset scored during training"
    return [Image(title, figures.to_data_uri(fig), caption + ".")]


def ladder(results: Results, section: Section) -> None:
    """E02: the ladder's table, its bar chart and its curves."""
    variants = [f"ladder-{row}" for row, _ in LADDER]
    section.protocol = protocol(results, variants)
    section.measured = measured(results, variants)
    base = results.per_seed("ladder-no-context/eval", "val/ppl")
    rows = []
    for (row, adds), v in zip(LADDER, variants, strict=True):
        rows.append(
            (
                row,
                adds,
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
            "x no-context",
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
            [r for r, _ in LADDER],
            {"val ppl": values},
            "E02: validation perplexity, row by row",
            "val/ppl",
            log=True,
        )
        section.figures.append(Image("The ladder", figures.to_data_uri(fig)))
    section.figures += curves(results, {f"ladder-{r}": r for r, _ in LADDER}, "E02 curves")


def dk(results: Results, section: Section) -> None:
    """E08: each width with and without the division by sqrt(d_k)."""
    variants = [f"{stem}-{s}" for _, _, stem in DK_ROWS for s in ("scaled", "unscaled")]
    section.protocol = protocol(results, variants)
    section.measured = measured(results, variants)
    rows, with_div, without = [], [], []
    for setting, d_k, stem in DK_ROWS:
        a = results.summary(f"{stem}-scaled/eval", "val/ppl")
        b = results.summary(f"{stem}-unscaled/eval", "val/ppl")
        with_div.append(a)
        without.append(b)
        ratio = ratio_cell(
            *(results.per_seed(f"{stem}-{s}/eval", "val/ppl") for s in ("unscaled", "scaled"))
        )
        rows.append((setting, str(d_k), spread_cell(a), spread_cell(b), ratio))
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
        labels = [f"{d}\n({p.split(',')[0]})" for p, d, _ in DK_ROWS]
        fig = figures.bars(
            labels,
            {"divided": with_div, "undivided": without},
            "E08: the sqrt(d_k) effect per width",
            "val/ppl",
        )
        section.figures.append(Image("The sqrt(d_k) effect", figures.to_data_uri(fig)))
    section.figures += curves(
        results,
        {
            f"{stem}-{s}": f"{stem.removeprefix('dk-')} {s}"
            for _, _, stem in DK_ROWS
            for s in ("scaled", "unscaled")
        },
        "E08 curves",
    )


def score_stats(results: Results, section: Section) -> None:
    """E09: score spread, entropy and one-hot rows at init and after training."""
    rows, std = [], {"init": [], "trained": []}
    labels = []
    for _, d_k, stem in DK_ROWS:
        for s in ("scaled", "unscaled"):
            src = f"{stem}-{s}/eval"
            got = {
                (w, k): results.summary(src, f"{w}/{k}/*")
                for w in ("init", "trained")
                for k in ("scores/std", "attn/entropy", "attn/onehot_frac")
            }
            if all(v is None for v in got.values()):
                continue
            labels.append(f"{stem.removeprefix('dk-')} {'/' if s == 'scaled' else 'no /'}")
            for when in std:
                std[when].append(got[when, "scores/std"])
            rows.append(
                (
                    f"{stem}-{s}",
                    str(d_k),
                    "yes" if s == "scaled" else "no",
                    *(
                        spread_cell(got[w, k])
                        for k in ("scores/std", "attn/entropy", "attn/onehot_frac")
                        for w in ("init", "trained")
                    ),
                )
            )
    section.protocol = protocol(results, ["dk-1024-scaled", "dk-1024-unscaled"])
    section.measured = measured(results, ["dk-1024-scaled", "dk-1024-unscaled"])
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


def norms(results: Results, section: Section) -> None:
    """E11: pre- vs post-norm with and without warmup; gradient norm per block at init."""
    variants = [f"norm-{n}" for n in NORMS]
    section.protocol = protocol(results, variants)
    section.measured = measured(results, variants)
    rows = [
        (
            n,
            spread_cell(results.summary(f"norm-{n}/eval", "val/ppl")),
            spread_cell(results.summary(f"norm-{n}/train", "train/loss")),
            spread_cell(results.summary(f"norm-{n}/eval", "grad_norm/ratio_last_first")),
        )
        for n in NORMS
    ]
    section.tables += table_if_any(
        "12 blocks, 1000 steps at lr 3e-3",
        ("variant", "val ppl", "train loss", "grad norm last / first block (init)"),
        rows,
        SPREAD_NOTE,
    )
    grads = {}
    for n in NORMS:
        record = results.record(f"norm-{n}/eval")
        blocks = sorted(k for k in record if k.startswith("grad_norm/block_"))
        if blocks:
            grads[n] = [results.summary(f"norm-{n}/eval", k) for k in blocks]
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
    section.figures += curves(results, {f"norm-{n}": n for n in NORMS}, "E11 curves")


def positions(results: Results, section: Section) -> None:
    """E13: perplexity against evaluation length per position method."""
    variants = [f"positions-{m}" for m in POSITIONS]
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
    lengths = lengths or [64, 128, 256]
    table = {
        m: [results.summary(f"positions-{m}/eval", f"val/ppl@{n}") for n in lengths]
        for m in POSITIONS
    }
    rows = [(m, *(spread_cell(v) for v in table[m])) for m in POSITIONS]
    section.tables += table_if_any(
        "Trained on 64 tokens, evaluated longer",
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
    section.figures += curves(results, {v: v.split("-", 1)[1] for v in variants}, "E13 curves")


def depth(results: Results, section: Section) -> None:
    """E18: one block vs two, train and validation perplexity."""
    variants = ["depth-1", "depth-2"]
    section.protocol = protocol(results, variants)
    section.measured = measured(results, variants)
    rows = []
    for v in variants:
        train, val = (results.per_seed(f"{v}/eval", k) for k in ("train/ppl", "val/ppl"))
        rows.append(
            (
                v.split("-")[1],
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
