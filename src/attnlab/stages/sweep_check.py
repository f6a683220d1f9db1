"""Stage ``sweep-check@{study}-{seed}``: train a study's best trial as a normal run, measure it."""

import json
import logging
from typing import Annotated

import typer

from attnlab import paths, result_code
from attnlab.config import load_params
from attnlab.evaluation.saved_run import evaluate_trained
from attnlab.stages.command import DEFAULT_PARAMS, ParamsFile, RunSeed, run_stage
from attnlab.sweeps.check import check_record, check_variant, read_best_params, study_params
from attnlab.training import TrainJob
from attnlab.training.recorded import RunFiles, train_and_record


def main(
    study: Annotated[str, typer.Option("--study", help="The study (a key of sweeps.studies).")],
    seed: RunSeed,
    params: ParamsFile = DEFAULT_PARAMS,
) -> None:
    """Train study STUDY's best trial under one seed at its variant's full length; measure it.

    The run is the study's variant with the best trial's params set over it, exactly as
    the trial trained, but at the variant's own length (budget.scale alone, not the
    study's budget) and resumable, like train@{variant}-{seed}; it is measured like
    evaluate@{variant}-{seed}. It runs even when the best trial is the catalogue's choice
    itself (eval.json says so: same_as_choice), so the comparison is always made.

    Reads: reports/sweeps/{study}/best.json (the best trial's params); params seed,
    budget.scale, model, train, bpe.vocab_size, variants (the study's variant),
    sweeps.studies.{study}, trainer, runtime, evaluate; data/tokens/train.parquet
    and val.parquet, data/tokenizer/tokenizer.json; ATTNLAB_RUN_ROOT, WANDB_DIR, WANDB_MODE.
    Writes: ({run} is {study}/seed-{seed}) data/sweeps/check/{run}/ (model.pt,
    config.json), reports/metrics/sweep-check/{run}/train.json and eval.json (the
    evaluate stage's record, and under `check` the best params against the choice's), and
    reports/curves/sweep-check/{run}/train_loss.csv and val_ppl.csv.
    """
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    cfg = load_params(params)
    axes = list(study_params(cfg, study).space)  # an unknown study: ParamsError
    best = read_best_params(paths.best_trial(study), study, axes)
    variant = check_variant(cfg, study, best)
    files = RunFiles(
        paths.TRAIN_TOKENS,
        paths.VAL_TOKENS,
        paths.TOKENIZER,
        *paths.check_folders(study, seed),
        stage="sweep-check",
    )
    result = train_and_record(cfg, TrainJob.from_variant(cfg, variant, seed), files)
    if not result.is_global_zero:
        return  # DDP: rank 0 alone writes the outputs
    record = evaluate_trained(
        files.model, variant.name, seed, cfg.evaluate, cfg.seed, paths.TOKENS, paths.TOKENIZER
    )
    record["check"] = check_record(cfg, study, best)
    record[result_code.CODE] = result_code.stamp("sweep-check")
    paths.write_metrics(files.metrics / paths.EVAL_METRICS, record)
    print(
        f"sweep-check {paths.run(study, seed)}: {best} val/ppl {record['val/ppl']:.3f}; "
        f"{json.dumps(record['check'])}"
    )


if __name__ == "__main__":
    run_stage(main)
