"""Stage ``sweep-check@{study}-{seed}``: train a study's best trial as a normal run, measure it."""

import json
import logging
from pathlib import Path
from typing import Annotated

import typer

from attnlab.cli import DEFAULT_PARAMS, ParamsFile, RunSeed, run_stage
from attnlab.config import load_params
from attnlab.evaluation.trained import evaluate_trained
from attnlab.sweeps.check import check_record, check_variant, read_best_params, study_params
from attnlab.training import TrainJob, seed_label, write_json
from attnlab.training.recorded import RunFiles, train_and_record

TOKENS = Path("data/tokens")
TOKENIZER = Path("data/tokenizer/tokenizer.json")
SWEEPS = Path("reports/sweeps")
MODELS = Path("data/sweeps/check")
METRICS = Path("reports/metrics/sweep-check")
CURVES = Path("reports/curves/sweep-check")


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
    sweeps.studies.{study}, trainer, checkpoint, wandb, evaluate; data/tokens/train.parquet
    and val.parquet, data/tokenizer/tokenizer.json; ATTNLAB_RUN_ROOT, WANDB_DIR, WANDB_MODE.
    Writes: ({run} is {study}/seed-{seed}) data/sweeps/check/{run}/ (model.pt,
    config.json), reports/metrics/sweep-check/{run}/train.json and eval.json (the
    evaluate stage's record, and under `check` the best params against the choice's), and
    reports/curves/sweep-check/{run}/train_loss.csv and val_ppl.csv.
    """
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    cfg = load_params(params)
    axes = list(study_params(cfg, study).space)  # an unknown study: ParamsError
    best = read_best_params(SWEEPS / study / "best.json", study, axes)
    variant = check_variant(cfg, study, best)
    run = Path(study, seed_label(seed))
    files = RunFiles(
        TOKENS / "train.parquet",
        TOKENS / "val.parquet",
        TOKENIZER,
        MODELS / run,
        METRICS / run,
        CURVES / run,
    )
    result = train_and_record(cfg, TrainJob.from_variant(cfg, variant, seed), files)
    if not result.is_global_zero:
        return  # DDP: rank 0 alone writes the outputs
    record = evaluate_trained(
        files.model, variant.name, seed, cfg.evaluate, cfg.seed, TOKENS, TOKENIZER
    )
    record["check"] = check_record(cfg, study, best)
    write_json(files.metrics / "eval.json", record)
    print(
        f"sweep-check {run}: {best} val/ppl {record['val/ppl']:.3f}; {json.dumps(record['check'])}"
    )


if __name__ == "__main__":
    run_stage(main)
