"""Stage ``winograd-data``: generate both Winograd tasks (E16 leaky, E17 closed) as Parquet."""

import json
from pathlib import Path

from attnlab.cli import DEFAULT_PARAMS, ParamsFile, run_stage
from attnlab.config import load_params
from attnlab.winograd.data import write_task

DATA = Path("data/winograd")
METRICS = Path("reports/metrics/winograd/data.json")


def main(
    params: ParamsFile = DEFAULT_PARAMS,
) -> None:
    """Generate every sentence of both tasks with its split, from the params seed.

    Reads: params seed, winograd.adjectives, winograd.leaky, winograd.closed.
    Writes: data/winograd/leaky.parquet and data/winograd/closed.parquet (one row per
    sentence: words, split, 18 token ids; the vocabulary in the schema metadata), and
    reports/metrics/winograd/data.json (per task: vocabulary and its size, sentences and
    noun pairs per split).
    """
    loaded = load_params(params)
    cfg = loaded.winograd
    metrics = {}
    for name in ("leaky", "closed"):
        task = cfg.build_task(name, loaded.seed)
        write_task(task, DATA / f"{name}.parquet")
        metrics[name] = {
            "vocab_size": len(task.vocabulary),
            "train_sentences": len(task.split("train")),
            "held_out_sentences": len(task.split("held_out")),
            "train_pairs": len(task.pairs("train")),
            "held_out_pairs": len(task.pairs("held_out")),
            "vocabulary": " ".join(task.vocabulary),
        }
        print(f"{name}: " + ", ".join(f"{k} {v}" for k, v in metrics[name].items()))
    METRICS.parent.mkdir(parents=True, exist_ok=True)
    METRICS.write_text(json.dumps(metrics, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    run_stage(main)
