"""Stage ``winograd-data``: generate both Winograd tasks (E16 leaky, E17 closed) as Parquet."""

from attnlab import paths, result_code
from attnlab.config import load_params
from attnlab.stages.command import DEFAULT_PARAMS, ParamsFile, run_stage
from attnlab.winograd.from_params import build_tasks
from attnlab.winograd.task_files import write_task


def main(
    params: ParamsFile = DEFAULT_PARAMS,
) -> None:
    """Generate every sentence of both tasks with its split, from the params seed.

    Reads: params seed, winograd.adjectives, winograd.leaky, winograd.closed.
    Writes: data/winograd/leaky.parquet and data/winograd/closed.parquet (one row per
    sentence: words, split, 18 token ids; the vocabulary in the schema metadata), and
    reports/metrics/winograd/data.json (per task: its held-out design and share,
    vocabulary and its size, sentences and noun pairs per split).
    """
    loaded = load_params(params)
    cfg = loaded.winograd
    metrics = {}
    for name, task in build_tasks(cfg, loaded.seed).items():
        write_task(task, paths.winograd_task(name))
        held_out = cfg.leaky.held_out if name == "leaky" else cfg.closed.held_out
        metrics[name] = {
            "held_out_design": held_out.design,
            "held_out_share": held_out.share,
            "vocab_size": len(task.vocabulary),
            "train_sentences": len(task.split("train")),
            "held_out_sentences": len(task.split("held_out")),
            "train_pairs": len(task.pairs("train")),
            "held_out_pairs": len(task.pairs("held_out")),
            "vocabulary": " ".join(task.vocabulary),
        }
        print(f"{name}: " + ", ".join(f"{k} {v}" for k, v in metrics[name].items()))
    paths.write_metrics(
        paths.WINOGRAD_DATA_METRICS,
        {**metrics, result_code.CODE: result_code.stamp("winograd-data")},
    )


if __name__ == "__main__":
    run_stage(main)
