"""Hand-made measurements in the layout the pipeline writes, for the report's tests.

``write_run`` lays out what a tiny-budget ``dvc repro`` leaves under ``reports/``: every
variant of params.yaml trained and evaluated under each of :data:`SEEDS` (one folder or
file per seed, ``seed-<s>``; an alias row has none, its variant's evaluation holds its
experiment's measurements too), the probes, the cost table, the Winograd models with their
maps, and one sweep. The numbers are made up but shaped like real ones, each seed a little
off the others; ``only`` keeps a subset (a partial run). What a variant's evaluation
holds is what the catalogue measures for the rows that read it.
"""

import csv
import itertools
import json
import math
from pathlib import Path

from attnlab import result_code
from attnlab.catalogue import along_of, experiments, experiments_of, measurements_for
from attnlab.catalogue.winograd import WORDS
from attnlab.config import load_params
from attnlab.report import ReportInputs
from attnlab.stages.report import recipe
from attnlab.verdicts.winograd_maps import CROSSED, CROSSER

ROOT = Path(__file__).resolve().parents[2]
_LOADED = load_params(ROOT / "params.yaml")
VARIANTS = list(_LOADED.variants)
ALIASES: dict[str, str] = dict(_LOADED.aliases)
PARAMS = {
    "seed": 1337,
    "budget": {"scale": 0.002},
    "wandb": {"entity": None, "project": "attnlab"},  # offline: no links
    "sweeps": {"dk": {"variant": "dk-128-scaled", "choice": {"d_head": 128, "scale_scores": True}}},
    "variants": {name: recipe(_LOADED, name) for name in VARIANTS},  # the protocol tables quote
}
SEEDS = (1, 2)
GROUPS = {"probes", "cost", "winograd", "sweeps"}  # what ``write_run`` keeps beside experiments


def jitter(seed: int, i: int) -> float:
    """Seed ``seed``'s factor on row ``i``'s numbers: a few per mille, varying by row."""
    return 1 + 0.004 * (seed - 1) * (1 + i % 3)


def inputs(reports: Path) -> ReportInputs:
    """The report's inputs for a fabricated ``reports`` folder."""
    return ReportInputs(
        reports / "metrics",
        reports / "curves",
        reports / "tables",
        reports / "figures",
        reports / "sweeps",
        PARAMS,
        ALIASES,
        tuple(VARIANTS),
        code={stage: result_code.code_digests(stage) for stage in result_code.RECORDED},
    )


def stamped(stage: str, payload: dict) -> dict:
    """``payload`` as ``stage`` writes it: stamped with the code of this checkout."""
    return {**payload, result_code.CODE: result_code.stamp(stage)}


def _record(stage: str, path: Path, payload: dict) -> None:
    _json(path, stamped(stage, payload))


def _json(path: Path, payload: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2))


def _rows(path: Path, rows: list[dict], delimiter: str = "\t") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), delimiter=delimiter)
        writer.writeheader()
        writer.writerows(rows)


def _measurements(name: str) -> tuple[str, ...]:
    """What the evaluate stage measures on ``name``'s runs: for its rows and its aliases'."""
    return measurements_for(name, *(a for a, v in ALIASES.items() if v == name))


STEPS_KEPT = (0, 1, 2, 4, 6)  # the steps a run of 6 keeps along training


def along_record(measured: tuple[str, ...], i: int, seed: int) -> dict:
    """A record's ``along``: a spread that grows with the step, a ratio that falls."""
    metrics = {}
    if "score_stats" in measured:
        spread = [(1 + i) * (1 + step) * jitter(seed, step) for step in STEPS_KEPT]
        metrics["scores/std/block_00/head_00"] = spread
        metrics["attn/onehot_frac/block_00/head_00"] = [step / 6 for step in STEPS_KEPT]
    if "grad_norms" in measured:
        for prefix in ("grad_norm", "grad_norm_weights_rms"):
            metrics[f"{prefix}/ratio_last_first"] = [
                (2.0 + i) / (1 + step) * jitter(seed, step) for step in STEPS_KEPT
            ]
    return {"steps": list(STEPS_KEPT), "metrics": metrics}


def _variant(reports: Path, name: str, i: int, seed: int) -> None:
    ppl = (300.0 + 7.0 * i) * jitter(seed, i)
    measured = _measurements(name)
    _record(
        "train",
        reports / f"metrics/{name}/seed-{seed}/train.json",
        {
            "train/loss": math.log(ppl) - 0.05,
            "steps": 6,
            "tokens_seen": 6 * 64 * 128,
            "wall_s": 1.5 + i,
            "device": "cpu",
            "world_size": 1,
            "precision": "32-true",
            "seed": seed,
        },
    )
    record = {
        "val/ppl": ppl,
        "train/ppl": ppl - 10,
        "params/total": 477_696 + i,
        "protocol": {"perplexity": "every validation token scored once."},
        "seed": seed,
    }
    if "extrapolation" in measured:
        record.update({f"val/ppl@{n}": ppl * (1 + n / 640) for n in (64, 128, 256)})
    if "score_stats" in measured:
        for when, spread in (("init", 1.0), ("trained", 3.0)):
            record[f"{when}/scores/std/block_00/head_00"] = spread * (1 + i)
            record[f"{when}/attn/entropy/block_00/head_00"] = 2.0 / spread
            record[f"{when}/attn/onehot_frac/block_00/head_00"] = 0.05 * spread
    if "grad_norms" in measured:
        norms = [0.1 * (1 + b) ** (1.5 if "post" in name else 0.2) for b in range(12)]
        record.update({f"grad_norm/block_{b:02d}": n for b, n in enumerate(norms)})
        record["grad_norm/ratio_last_first"] = norms[-1] / norms[0]
        rms = {f"grad_norm_weights_rms/block_{b:02d}": n / 30 for b, n in enumerate(norms)}
        record.update(rms, **{"grad_norm_weights_rms/ratio_last_first": norms[-1] / norms[0]})
    along = along_of(experiments_of(name, *(a for a, v in ALIASES.items() if v == name)))
    if along:
        record["along"] = along_record(along, i, seed)
    _record("evaluate", reports / f"metrics/{name}/seed-{seed}/eval.json", record)
    losses = [{"step": s, "loss": (6.9 - 0.1 * s) * jitter(seed, s)} for s in range(1, 7)]
    _rows(reports / f"curves/{name}/seed-{seed}/train_loss.csv", losses, ",")
    _rows(
        reports / f"curves/{name}/seed-{seed}/val_ppl.csv",
        [{"step": 0, "val/ppl": 1024.0}, {"step": 6, "val/ppl": ppl}],
        ",",
    )


def maps() -> dict:
    """Two blocks' rows at the query, per adjective, shaped as the story tells it.

    Block 1 looks at the first noun; block 2 at the adjective and, for crossed-thing
    adjectives, at the second noun.
    """
    query = WORDS.index("{ref}")  # positions 0 .. query - 1
    tokens = [w.strip("{}") for w in WORDS[:query]]
    out = {}
    for adj in (*CROSSER, *CROSSED):
        first = [0.02] * query
        first[1] = 1 - 0.02 * (query - 1)
        second = [0.03] * query
        second[11], second[6 if adj in CROSSED else 1] = 0.3, 0.3
        second[0] += 1 - sum(second)
        out[adj] = {"tokens": [adj if t == "adj" else t for t in tokens], "blocks": [first, second]}
    return out


def write_run(reports: Path, only: set[str] | None = None) -> Path:
    """Write a tiny-budget run under ``reports``.

    ``only`` keeps the trained variants that are rows of the catalogue experiments listed
    (``E02``, ``E18``...) and the groups listed (``probes``, ``cost``, ``winograd``,
    ``sweeps``); None keeps everything.
    """
    unknown = set(only or ()) - set(experiments()) - GROUPS
    if unknown:  # a word that keeps nothing would make a partial run of the wrong shape
        raise ValueError(f"only: not an experiment id or a group: {sorted(unknown)}")
    keep = (lambda word: True) if only is None else (lambda word: word in only)
    _record("tokenize", reports / "metrics/corpus.json", {"chars": 1115394, "tokens": 459792})
    for i, name in enumerate(VARIANTS):
        if any(keep(key) for key in experiments_of(name)):
            for seed in SEEDS:
                _variant(reports, name, i, seed)
    if keep("probes"):
        _record("probes", reports / "metrics/probes/e03.json", {"e03/last_row_max_abs_diff": 0.0})
        _record(
            "probes",
            reports / "metrics/probes/e05.json",
            {"e05/var_over_d@4": 0.99, "e05/var_over_d@64": 1.01},
        )
        _record(
            "probes",
            reports / "metrics/probes/e15.json",
            {"e15/total/formula": 124_439_808, "e15/total/module": 124_439_808},
        )
        _rows(
            reports / "tables/probes/e05_dot_products.tsv",
            [{"d": 4, "var": 3.96, "var_over_d": 0.99}, {"d": 64, "var": 64.6, "var_over_d": 1.01}],
        )
    if keep("cost"):
        _record(
            "cost",
            reports / "metrics/cost.json",
            {"e14/naive/time_slope": 1.93, "e14/device": "cpu"},
        )
        _rows(
            reports / "tables/e14_cost.tsv",
            [
                {"implementation": impl, "n": n, "status": "ok", "total_ms": n * n / k}
                for impl, k in (("naive", 1e4), ("sdpa", 3e4))
                for n in (128, 256, 512)
            ],
        )
    if keep("winograd"):
        for task, accs in (("leaky", (0.9, 0.7, 0.8)), ("closed", (0.3, 0.85, 0.99))):
            for (model, value), seed in itertools.product(
                zip(("average", "one-block", "two-blocks"), accs, strict=True), SEEDS
            ):
                share = round(value * jitter(seed, 1) ** -1, 4)
                record = {
                    "winograd/acc": share,
                    "winograd/wrong_noun": 0.5 - share / 4,
                    "winograd/sentences": 240,
                    "seed": seed,
                }
                _record(
                    "winograd-score",
                    reports / f"metrics/winograd/{task}-{model}/seed-{seed}.json",
                    record,
                )
                _record(
                    "winograd-train",
                    reports / f"metrics/winograd/train/{task}-{model}/seed-{seed}.json",
                    {"train/loss": 0.1, "steps": 4, "wall_s": 0.5, "device": "cpu", "seed": seed},
                )
                _rows(
                    reports / f"curves/winograd/{task}-{model}/seed-{seed}.csv",
                    [{"step": s, "loss": 3.0 / s * jitter(seed, s)} for s in range(1, 5)],
                    ",",
                )
        _record(
            "winograd-data",
            reports / "metrics/winograd/data.json",
            {
                task: {"train_sentences": 10, "held_out_sentences": 4}
                for task in ("leaky", "closed")
            },
        )
        _record(
            "winograd-maps",
            reports / "tables/winograd/maps.json",
            {"variant": "closed-two-blocks", "x": "animal", "y": "street", "adjectives": maps()},
        )
    if keep("sweeps"):
        _sweep(reports / "sweeps/dk")
    return reports


def _sweep(folder: Path) -> None:
    """Study ``dk`` as the sweep stage writes it: 5 completed trials, one pruned, one failed.

    Trial 2 has the catalogue's choice (d_head 128, divided) and is the best.
    """
    rows = [
        {
            "number": i,
            "state": "COMPLETE",
            "value": 300 + (i - 2) ** 2,
            "duration_s": 1.0,
            "wandb_run_id": f"run{i}",
            "worker": "host:1",
            "retry_of": "",
            "note": "",
            "d_head": 2 ** (i + 5),
            "scale_scores": i % 2 == 0,
        }
        for i in range(5)
    ]
    rows.append({**rows[0], "number": 5, "state": "PRUNED", "value": "", "wandb_run_id": "run5",
                 "note": "pruned at step 4 (curve val/ppl 900)"})  # fmt: skip
    rows.append({**rows[0], "number": 6, "state": "FAIL", "value": "", "wandb_run_id": "",
                 "note": "its worker stopped sending heartbeats (killed?)"})  # fmt: skip
    _rows(folder / "trials.csv", rows, ",")
    _record(
        "sweep",
        folder / "best.json",
        {
            "study": "sweep-dk",
            "val/ppl": 300.0,
            "trial": 2,
            "params": {"d_head": 128, "scale_scores": True},
            "wandb_run_id": "run2",
            "trials": {"target": 6, "RUNNING": 0, "COMPLETE": 5, "PRUNED": 1, "FAIL": 1},
            "cost": {"trial_s": 7.0, "wall_s": 4.5},
            "protocol": {"variant": "dk-128-scaled", "budget": 1.0, "workers": 2},
        },
    )
