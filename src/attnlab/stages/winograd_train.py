"""Stage ``winograd-train@<variant>-<seed>``: train one Winograd run (shared training code)."""

import logging
from typing import Annotated

import torch
import typer

from attnlab import paths, result_code
from attnlab.config import load_params
from attnlab.runs import save_trained_model, write_curve
from attnlab.stages.command import DEFAULT_PARAMS, ParamsFile, Resume, RunSeed, run_stage
from attnlab.training import FitOptions, TrainJob, run_root_from_env, train_variant, wandb_dir
from attnlab.winograd.accuracy_curve import ACCURACY, AccuracyCurve, log_spaced_steps
from attnlab.winograd.sentence_batches import WinogradSentences
from attnlab.winograd.task_files import read_sentences


def main(
    variant: Annotated[str, typer.Option("--variant", help="The Winograd variant to train.")],
    seed: RunSeed,
    params: ParamsFile = DEFAULT_PARAMS,
    resume: Resume = True,
) -> None:
    """Train one Winograd variant under one seed on its task's training sentences, resumably.

    Reads: params budget.scale, winograd.model, winograd.train, winograd.torch_threads,
    winograd.variants.<variant>, trainer, runtime; data/winograd/<task>.parquet
    (the task is the variant name's first word); the environment variables
    ATTNLAB_RUN_ROOT, WANDB_DIR, WANDB_MODE (as the train stage).
    Writes: data/winograd/models/<variant>/seed-<seed>/ (model.pt and config.json),
    reports/metrics/winograd/train/<variant>/seed-<seed>.json (train/loss: mean of the
    last 5 % of steps; seed, init_seed, data_seed; steps, tokens_seen, wall_s,
    tokens_per_s, params, device) and reports/curves/winograd/<variant>/seed-<seed>.csv
    (step, loss), and reports/curves/winograd/<variant>/seed-<seed>/accuracy.csv (step,
    accuracy: the held-out share answered right at steps 0, 1, 2, 4, ... and the last,
    scored as winograd-score scores; its last point is the run's winograd/acc).
    """
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    loaded = load_params(params)
    cfg = loaded.winograd
    torch.set_num_threads(cfg.torch_threads)
    job = TrainJob.from_variant(loaded, cfg.variant(variant), seed)
    path = paths.winograd_task(cfg.task_of(variant))
    sentences = WinogradSentences(
        path, job.variant.train.batch_size, job.data_seed, job.steps, job.runtime.num_workers
    )
    accuracy = AccuracyCurve(read_sentences(path, "held_out"), log_spaced_steps(job.steps))
    run_root = run_root_from_env()
    options = FitOptions(path, run_root, wandb_dir(run_root), resume=resume, data=sentences)
    result = train_variant(job, options, callbacks=[accuracy])
    if not result.is_global_zero:
        return  # DDP: rank 0 alone writes the outputs
    save_trained_model(result.model, result.config, paths.winograd_model_dir(variant, seed))
    paths.write_metrics(
        paths.winograd_train_metrics(variant, seed),
        {
            **result.metrics,
            result_code.CODE: result_code.stamp("winograd-train"),
            "provenance": result.provenance,
        },
    )
    write_curve(paths.winograd_curve(variant, seed), result.curve)
    write_curve(paths.winograd_accuracy_curve(variant, seed), accuracy.points, ACCURACY)
    result.discard_resume_state()  # only now: a failed write above can still resume
    metrics = result.metrics
    print(
        f"{paths.run(variant, seed)}: train/loss {metrics['train/loss']:.4f} "
        f"after {metrics['steps']} steps, "
        f"{metrics['wall_s']:.1f} s"
    )


if __name__ == "__main__":
    run_stage(main)
