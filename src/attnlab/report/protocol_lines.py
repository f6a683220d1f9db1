"""The protocol lines of a trained experiment, read from its rows' per-seed metrics files.

Shared by the trained sections (E02, E08, E09, E11, E13, E18:
:mod:`attnlab.report.trained_sections`) and the Winograd ones (E16, E17:
:mod:`attnlab.report.winograd_section`): rows and seeds trained, budget, steps, hardware,
wall time, where each row's validation curve was lowest (the early-stopping protocol's
step), and where each run's numbers came from.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from attnlab.paths import BEST_STEP
from attnlab.report.content import MISSING, cell, library_versions, params_line
from attnlab.report.inputs import Results
from attnlab.verdicts.stats import Seed


def protocol(
    results: Results, variants: Sequence[str], train: str = "{}/train", evaluation: str = "{}/eval"
) -> list[tuple[str, str]]:
    """The protocol lines of a trained experiment, read from its rows' metrics files.

    ``train`` and ``evaluation`` name a row's metrics files (``{}`` is the variant).
    """
    runs = {
        (v, seed): record
        for v in variants
        for seed, record in results.runs(train.format(v)).items()
    }
    evals = [record for v in variants for record in results.runs(evaluation.format(v)).values()]
    trained = {v for v, _ in runs}
    lines = [("rows trained", f"{len(trained)} of {len(variants)}")]
    shared = [f"{v}: same run as {results.aliases[v]}" for v in variants if v in results.aliases]
    if shared:
        lines.append(("shared runs (params aliases)", "; ".join(shared)))
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
        ("lowest validation point (early stopping's step)", best_steps(runs, variants)),
        ("library versions (rendering environment)", library_versions()),
        ("provenance", provenance(runs)),
    ]
    sentences = {
        s for e in evals if isinstance(e.get("protocol"), dict) for s in e["protocol"].values()
    }
    lines += [("measured", s) for s in sorted(sentences)]
    return lines


def best_steps(runs: dict[tuple[str, Seed], dict], variants: Sequence[str]) -> str:
    """Where each row's validation curve was lowest: its median step over seeds, and range.

    ``runs`` is keyed by (variant, seed), each its ``train.json`` (``best/step``, written
    by :meth:`~attnlab.metrics.ValidationCurve.best`).
    """
    rows = []
    for variant in variants:
        records = [r for (v, _), r in runs.items() if v == variant and BEST_STEP in r]
        if not records:
            continue
        steps = sorted(int(r[BEST_STEP]) for r in records)
        spread = f" ({steps[0]}-{steps[-1]})" if steps[0] != steps[-1] else ""
        last = max(int(r.get("steps", 0)) for r in records)
        rows.append(f"{variant} {statistics.median(steps):g}{spread} of {last}")
    return "; ".join(rows) or MISSING


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
    return any(results.runs(f"{v}/{k}") for v in variants for k in ("train", "eval"))
