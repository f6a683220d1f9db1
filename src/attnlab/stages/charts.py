"""Stage ``charts``: the catalogue's charts, one file each, the folder `dvc plots show` draws."""

import shutil
from typing import Annotated

import typer

from attnlab import paths
from attnlab.catalogue import catalogue
from attnlab.charts import write_charts
from attnlab.config import load_params
from attnlab.config.fingerprint import TRAIN
from attnlab.stages.command import DEFAULT_PARAMS, ParamsFile, run_stage
from attnlab.training.configurations import expected_runs

ChartSeed = Annotated[
    int | None,
    typer.Option(
        "--seed",
        min=0,
        max=2**32 - 1,
        help="The seed whose runs the charts draw (default: the first of params seeds).",
    ),
]


def main(
    seed: ChartSeed = None,
    params: ParamsFile = DEFAULT_PARAMS,
) -> None:
    """Gather each chart's curves into one file: every row of its experiments, one run each.

    Reads: params aliases (an alias row draws the run of its variant); seed, budget,
    model, train, trainer, bpe.vocab_size, variants and evaluate.curve (the configuration
    each run's reports/metrics/{variant}/seed-{seed}/train.json must state: a stale run
    is left out, and named); the catalogue's
    charts and their experiments' rows; each row's curve of the run under `--seed`
    (by default, and as dvc.yaml passes it, the first of params `seeds`; the report
    draws every seed):
    reports/curves/{variant}/seed-{seed}/train_loss.csv or val_ppl.csv, or
    reports/curves/winograd/{variant}/seed-{seed}.csv. A row not trained yet is left out.
    Writes: reports/charts/{chart}.csv for each chart with a row trained (E02-train-loss,
    E02-val-ppl, E16-E17-winograd-loss, ...): the columns variant (the row's name), step
    and the curve's value (loss or val/ppl).
    """
    loaded = load_params(params)
    if seed is None:
        seed = loaded.seeds[0]
    stale = {}
    for variant, runs in expected_runs(loaded, [seed]).items():
        record = paths.train_metrics(variant, seed)
        reason = runs[seed].differs(TRAIN, paths.read_metrics(record)) if record.is_file() else None
        if reason is not None:
            stale[variant] = reason
            print(f"charts: left out as stale: {variant} seed {seed}: {reason}")
    shutil.rmtree(paths.CHARTS, ignore_errors=True)  # no chart the catalogue no longer has
    paths.CHARTS.mkdir(parents=True)  # the declared output exists even before any run
    written = write_charts(catalogue(), loaded.aliases, seed, stale)
    print(f"charts: {len(written)} of {len(catalogue().charts)} have a run -> {paths.CHARTS}")


if __name__ == "__main__":
    run_stage(main)
