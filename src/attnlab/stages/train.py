"""Stage ``train@{variant}-{seed}``: train one run; write its model, metrics and curves.

Given several ``--seed``, the command trains them as one seed group in one process and
writes each one's outputs exactly where its own stage would: ``attnlab repro`` runs the
ready ``train`` stages of a variant this way, then records each stage in ``dvc.lock``.
"""

import logging
from typing import Annotated

import typer

from attnlab import paths
from attnlab.config import load_params
from attnlab.stages.command import DEFAULT_PARAMS, ParamsFile, Resume, RunSeeds, run_stage
from attnlab.training import TrainJob
from attnlab.training.along_steps import along_steps
from attnlab.training.capacity import check_fits_in_memory, runs_on_cpu
from attnlab.training.recorded import RecordedRun, RunFiles, train_and_record_group


def main(
    variant: Annotated[str, typer.Option("--variant", help="The variant to train.")],
    seed: RunSeeds,
    params: ParamsFile = DEFAULT_PARAMS,
    resume: Resume = True,
    keep_checkpoint: Annotated[
        bool, typer.Option(help="Keep the final checkpoint (optimiser state) after success.")
    ] = False,
) -> None:
    """Train one variant under one seed with Lightning, resuming a killed run where it stopped.

    Reads: params seed (the val/ppl curve's windows, the same for every run),
    budget.scale, model, train, bpe.vocab_size, variants.{variant}, trainer, runtime,
    evaluate.curve, evaluate.batch_size;
    data/tokens/train.parquet and val.parquet, data/tokenizer/tokenizer.json (the bytes
    per token of val/bpb); the environment variables
    ATTNLAB_RUN_ROOT (resume state, default ~/.cache/attnlab), WANDB_DIR, WANDB_MODE.
    Writes: ({run} is {variant}/seed-{seed}) data/models/{run}/ (model.pt and
    config.json), reports/metrics/{run}/train.json (train/loss: mean of the last 5 % of
    steps; seed, init_seed, data_seed; steps, tokens_seen, wall_s, tokens_per_s, params,
    device; fingerprint: the run's configuration, attnlab.config.fingerprint; provenance:
    git_commit, git_dirty, dvc_experiment, wandb_run) and
    reports/curves/{run}/train_loss.csv (step, loss: one row per step) and
    reports/curves/{run}/val_ppl.csv (step, val/ppl on a fixed sample of validation
    windows, every evaluate.curve.every_steps steps scaled by the budget); for a run an
    experiment of the catalogue measures along training (its ``along``: E09, E11),
    data/models/{run}/along/ (step-NNNNNN.pt, the weights at step 0, the budget-scaled
    powers of two and the last step, and manifest.json: each file's step and SHA-256).
    The W&B run's
    summary holds the whole-split val/ppl and val/bpb, the evaluate stage's protocol.
    """
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    cfg = load_params(params)
    jobs = [TrainJob.from_params(cfg, variant, one) for one in seed]
    job = jobs[0]
    if runs_on_cpu(job.trainer.accelerator):  # a group holds every member's activations
        batch = job.variant.train.batch_size * len(jobs)
        check_fits_in_memory(job.variant.model, batch, "train.batch_size", training=True)
    # The catalogue's experiments that measure this run along training (E09, E11). The
    # stage does not declare the catalogue (a claim's edit must not retrain every run):
    # after a change to an experiment's `along`, `dvc repro -f` its rows' train stages.
    along = along_steps(job) if cfg.measured_along(variant) else ()
    runs = [
        RecordedRun(
            one,
            RunFiles(
                paths.TRAIN_TOKENS,
                paths.VAL_TOKENS,
                paths.TOKENIZER,
                *paths.run_folders(variant, one.seed),
                stage="train",
            ),
            along,
        )
        for one in jobs
    ]
    results = train_and_record_group(cfg, runs, resume=resume, keep_checkpoint=keep_checkpoint)
    if not results[0].is_global_zero:
        return  # DDP: rank 0 alone wrote the outputs
    for one, result in zip(jobs, results, strict=True):
        metrics = result.metrics
        print(
            f"{paths.run(variant, one.seed)}: train/loss {metrics['train/loss']:.4f} "
            f"after {metrics['steps']} steps, "
            f"{metrics['wall_s']:.1f} s, {metrics['tokens_per_s']:,.0f} tokens/s"
        )


if __name__ == "__main__":
    run_stage(main)
