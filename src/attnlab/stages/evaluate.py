"""Stage ``evaluate@{variant}-{seed}``: measure one trained run as its experiment asks."""

import json
from typing import Annotated

import typer

from attnlab import paths, result_code
from attnlab.config import load_params
from attnlab.config.fingerprint import EVAL, FINGERPRINT, run_configuration
from attnlab.evaluation.saved_run import evaluate_trained, evaluation_device
from attnlab.runs.model_folder import CONFIG
from attnlab.stages.command import DEFAULT_PARAMS, ParamsFile, RunSeed, run_stage
from attnlab.training.capacity import check_fits_in_memory


def main(
    variant: Annotated[str, typer.Option("--variant", help="The trained variant to measure.")],
    seed: RunSeed,
    params: ParamsFile = DEFAULT_PARAMS,
) -> None:
    """Measure a trained run: perplexity on both splits plus its experiments' extras.

    Reads: params seed (E09's windows, E11's batch: the same for every run),
    evaluate.device, evaluate.batch_size, evaluate.lengths, evaluate.stats_windows;
    what the catalogue (src/attnlab/catalogue) measures for its experiments; aliases
    (rows of other experiments that read this run);
    data/models/{variant}/seed-{seed}/ (the trained model and the configuration it was
    trained with, its init seed included); data/tokens/train.parquet,
    data/tokens/val.parquet; data/tokenizer/tokenizer.json (the bytes of each token).
    Writes: reports/metrics/{variant}/seed-{seed}/eval.json: the run's seed, init_seed and
    data_seed; val/ppl and train/ppl at the training context (and the tokens each
    scored), val/bpb and train/bpb (bits per byte), params/{component}, and, as the
    catalogue measures on the variant's experiments and its aliases',
    val/ppl@{length} (E13), init/ and trained/ scores/std, attn/entropy, attn/onehot_frac
    per block and head (E08, E09), grad_norm/block_NN and grad_norm/ratio_last_first
    (E11), with grad_norm_weights_rms/ (weight matrices only, per-entry RMS),
    grad_norm_attention/ and grad_norm_mlp/ (each part alone) and grad_norm_eval/ (eval
    mode); along
    (E09, E11, what the catalogue measures along training): steps and, per key, its value
    at every step kept in data/models/{variant}/seed-{seed}/along/ (each file checked
    against the manifest's SHA-256 first: a mismatch is refused, nothing written); a
    protocol field saying how; wall_s; fingerprint (attnlab.config.fingerprint: the
    measured model's configuration, from its config.json, with the evaluate knobs).
    """
    cfg = load_params(params)
    if evaluation_device(cfg.evaluate.device).type == "cpu":
        model = cfg.variant(variant).model
        check_fits_in_memory(model, cfg.evaluate.batch_size, "evaluate.batch_size", training=False)
    record = evaluate_trained(
        paths.model_dir(variant, seed),
        variant,
        seed,
        cfg.evaluate,
        cfg.seed,
        paths.TOKENS,
        paths.TOKENIZER,
        experiments=cfg.experiments_reading(variant),
        along=cfg.measured_along(variant),
    )
    # The configuration of the model measured (its config.json), with the evaluate knobs:
    # the report reads the record only if the params give the same.
    trained = paths.read_metrics(paths.model_dir(variant, seed) / CONFIG)
    record[FINGERPRINT] = run_configuration(trained, cfg).fingerprints[EVAL]
    record[result_code.CODE] = result_code.stamp("evaluate")
    paths.write_metrics(paths.eval_metrics(variant, seed), record)
    headline = {
        k: v for k, v in record.items() if k.startswith(("val/ppl", "train/ppl", "val/bpb"))
    }
    print(f"{paths.run(variant, seed)}: {json.dumps(headline)}")


if __name__ == "__main__":
    run_stage(main)
