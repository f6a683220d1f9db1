"""Stage ``sweep@<study>``: run one Optuna study of params ``sweeps.studies``, write its reports.

``attnlab sweep run --study STUDY`` is this stage by hand; ``attnlab sweep worker STUDY``
joins the same study in a shared database from another machine.
"""

import logging
from pathlib import Path
from typing import Annotated

import optuna
import typer

from attnlab.cli import DEFAULT_PARAMS, ParamsFile, run_stage
from attnlab.config import load_params
from attnlab.data.tokens import read_tokens
from attnlab.evaluation.summary import token_byte_lengths
from attnlab.sweeps import (
    StorageError,
    Sweep,
    Tally,
    TrialObjective,
    best_record,
    is_sqlite,
    redact,
    run_study,
    storage_url,
    worker_seed,
    write_best,
    write_figures,
    write_snapshot,
    write_trials,
)
from attnlab.training import run_root_from_env, wandb_dir

TRAIN_TOKENS = Path("data/tokens/train.parquet")
VAL_TOKENS = Path("data/tokens/val.parquet")
TOKENIZER = Path("data/tokenizer/tokenizer.json")
STUDIES = Path("data/sweeps")
REPORTS = Path("reports/sweeps")
POLL_S = 2.0  # how often a worker waiting for a free slot looks at the study again


def _run(params: Path, study: str, worker: bool) -> tuple[Sweep, optuna.Study, Tally, str]:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    loaded = load_params(params)
    sweep = Sweep.named(loaded, study)
    url = storage_url(loaded.sweeps.storage, STUDIES / f"{study}.db")
    if worker and is_sqlite(url):
        raise StorageError(
            "a worker joins a shared study: set ATTNLAB_OPTUNA_STORAGE (or sweeps.storage) to "
            "the database every worker uses, e.g. postgresql+psycopg2://user@host:5432/db"
        )
    seed = worker_seed(loaded.seed) if worker else loaded.seed
    optuna_study = sweep.open(url, seed, TRAIN_TOKENS, VAL_TOKENS)
    run_root = run_root_from_env()
    objective = TrialObjective(
        sweep,
        TRAIN_TOKENS,
        read_tokens(VAL_TOKENS),
        run_root,
        wandb_dir(run_root),
        token_byte_lengths(TOKENIZER),
    )
    tally = run_study(optuna_study, objective, sweep.study.trials, loaded.sweeps.max_failed, POLL_S)
    return sweep, optuna_study, tally, url


def main(
    study: Annotated[str, typer.Option("--study", help="The study (a key of sweeps.studies).")],
    params: ParamsFile = DEFAULT_PARAMS,
) -> None:
    """Run study STUDY until it has its trials (continuing a stopped one), then report.

    Reads: params `seed`, `budget.scale`, `model`, `train`, `bpe.vocab_size`, the study's
    variant in `variants`, `trainer`, `checkpoint`, `wandb`, `evaluate.batch_size`,
    `evaluate.curve`, `sweeps` (storage, heartbeat, retries, `studies.STUDY`);
    `data/tokens/train.parquet` and `val.parquet`; `data/tokenizer/tokenizer.json` (the
    bytes per token of each trial's val/bpb); the environment variables
    `ATTNLAB_OPTUNA_STORAGE`, `ATTNLAB_RUN_ROOT`, `WANDB_DIR`, `WANDB_MODE`.

    Writes: `data/sweeps/STUDY.db` (the study; a copy of it when a database URL is set),
    `reports/sweeps/STUDY/best.json` (the best trial's val/ppl, params and W&B run, and
    every state's count), `trials.csv` (one row per trial) and `figures/` (optimisation
    history, parameter importances, slices, intermediate values).
    """
    sweep, optuna_study, tally, url = _run(params, study, worker=False)
    if not is_sqlite(url):
        write_snapshot(STUDIES / f"{study}.db", optuna_study, url)
    folder = REPORTS / study
    write_trials(folder / "trials.csv", optuna_study, list(sweep.study.space))
    protocol = {**sweep.protocol(), "storage": url.split(":", 1)[0]}
    record = best_record(optuna_study, sweep.study.trials, protocol)
    write_best(folder / "best.json", record)
    write_figures(folder / "figures", optuna_study)
    print(
        f"{sweep.name}: best val/ppl {record['val/ppl']:.3f} at trial {record['trial']} "
        f"{record['params']}; {tally.finished} trials finished"
    )


def worker(
    study: Annotated[str, typer.Argument(help="The study (a key of sweeps.studies).")],
    params: ParamsFile = DEFAULT_PARAMS,
) -> None:
    """Join study STUDY in the shared database and run trials until it has its count.

    Start one on every machine that should help (the same commit, the token files there).

    Reads: what `attnlab sweep run` reads; `ATTNLAB_OPTUNA_STORAGE` (or `sweeps.storage`)
    must be a database every worker reaches, e.g.
    `postgresql+psycopg2://user@host:5432/db`.

    Writes: trials into that database and W&B runs under `WANDB_DIR`; nothing in the project.
    """
    sweep, _, tally, url = _run(params, study, worker=True)
    print(f"{sweep.name} on {redact(url)}: {tally.finished} trials finished; this worker is done")


COMMANDS = {"run": main, "worker": worker}

if __name__ == "__main__":
    run_stage(main)
