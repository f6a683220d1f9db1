"""Stage ``winograd-data``: generate both Winograd tasks (E16 leaky, E17 closed) as Parquet."""

from attnlab import paths
from attnlab.config import WinogradParams, load_params
from attnlab.errors import ParamsError
from attnlab.stages.command import DEFAULT_PARAMS, ParamsFile, run_stage
from attnlab.winograd.sentences import TaskName, WinogradTask, build_task
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
    names: tuple[TaskName, ...] = ("leaky", "closed")
    tasks = {name: _built(cfg, name, loaded.seed) for name in names}
    metrics = {}
    for name, task in tasks.items():
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
    paths.write_metrics(paths.WINOGRAD_DATA_METRICS, metrics)


def _built(cfg: WinogradParams, name: TaskName, seed: int) -> WinogradTask:
    """The task ``name``, or a params error naming its held-out design when no split fits.

    Whether a held-out draw can keep every noun in training is only known once it is
    drawn, so it is checked here, before either task's file is written.
    """
    try:
        return build_task(cfg, name, seed)
    except ValueError as err:
        reason = str(err).removeprefix(f"{name}: ")
        raise ParamsError(f"winograd.{name}.held_out: {reason}") from None


if __name__ == "__main__":
    run_stage(main)
