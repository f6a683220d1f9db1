"""Stage ``sweep@<study>``: run one Optuna study of params ``sweeps.studies``, write its reports.

``attnlab sweep run --study STUDY`` is this stage by hand; ``attnlab sweep worker STUDY``
joins the same study in a shared database from another machine.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from attnlab import paths, result_code
from attnlab.stages.command import DEFAULT_PARAMS, ParamsFile, run_stage

if TYPE_CHECKING:
    import optuna

    from attnlab.sweeps import Sweep


def _run(params: Path, study: str, worker: bool) -> tuple[Sweep, optuna.Study, str, int]:
    # Optuna, Lightning and W&B load here, when a command runs: `--help` answers without them.
    import torch

    from attnlab.config import load_params
    from attnlab.sweeps import (
        StorageError,
        Sweep,
        WorkerJob,
        is_embedded,
        is_sqlite,
        local_workers,
        run_workers,
        session_seed,
        storage_url,
        worker_jobs,
        worker_seed,
    )
    from attnlab.training import run_root_from_env, wandb_dir

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    loaded = load_params(params)
    sweep = Sweep.named(loaded, study)
    url = storage_url(loaded.sweeps.storage, paths.study_journal(study))
    if worker and is_embedded(url):
        raise StorageError(
            "a worker joins a shared study: set ATTNLAB_OPTUNA_STORAGE (or sweeps.storage) to "
            "the database every worker uses, e.g. postgresql+psycopg2://user@host:5432/db"
        )
    count = local_workers(loaded.sweeps.workers)
    if count > 1 and is_sqlite(url):
        raise StorageError(
            f"sweeps.workers: {count} workers cannot share an SQLite study (concurrent writers "
            "get 'database is locked'): set sweeps.storage to null (a journal file) or "
            "sweeps.workers to 1"
        )
    seed = worker_seed(loaded.seed) if worker else loaded.seed
    # Created (or replaced, when its definition changed) once, its reference trials enqueued
    # first, before any worker joins.
    optuna_study = sweep.open(url, seed, paths.TRAIN_TOKENS, paths.VAL_TOKENS)
    if not worker:  # a worker's seed is fresh already; a rerun's must not repeat the last
        seed = session_seed(seed, optuna_study)
    run_root = run_root_from_env()
    first = WorkerJob(
        params=loaded,
        study=study,
        url=url,
        seed=seed,
        threads=torch.get_num_threads(),
        device=None,
        train_tokens=paths.TRAIN_TOKENS,
        val_tokens=paths.VAL_TOKENS,
        run_root=run_root,
        wandb_folder=wandb_dir(run_root),
        tokenizer=paths.TOKENIZER,
    )
    run_workers(worker_jobs(first, count))
    return sweep, optuna_study, url, count


def main(
    study: Annotated[str, typer.Option("--study", help="The study (a key of sweeps.studies).")],
    params: ParamsFile = DEFAULT_PARAMS,
) -> None:
    """Run study STUDY until it has its trials (continuing a stopped one), then report.

    Reads: params `seed`, `budget.scale`, `model`, `train`, `bpe.vocab_size`, the study's
    variant in `variants`, `trainer`, `runtime`, `evaluate.batch_size`,
    `evaluate.curve`, `sweeps` (storage, workers, retries, `studies.STUDY`);
    `data/tokens/train.parquet` and `val.parquet`; `data/tokenizer/tokenizer.json` (the
    bytes per token of each trial's val/bpb); the environment variables
    `ATTNLAB_OPTUNA_STORAGE`, `ATTNLAB_RUN_ROOT`, `WANDB_DIR`, `WANDB_MODE`.

    Runs `sweeps.workers` workers at once (`auto`: one per CPU core the stage may use, or
    per GPU), sharing the study.

    Writes: `data/sweeps/STUDY.journal` (the study, an Optuna journal file; a copy of it
    when a database URL is set),
    `reports/sweeps/STUDY/best.json` (the best trial's val/ppl, params and W&B run, and
    every state's count), `trials.csv` (one row per trial) and `figures/` (optimisation
    history, parameter importances, slices, intermediate values).
    """
    sweep, optuna_study, url, count = _run(params, study, worker=False)
    from attnlab.sweeps import (
        best_record,
        is_embedded,
        tally,
        write_figures,
        write_snapshot,
        write_trials,
    )

    if not is_embedded(url):
        write_snapshot(paths.study_journal(study), optuna_study, url)
    folder = paths.sweep_folder(study)
    write_trials(folder / paths.TRIALS, optuna_study, list(sweep.study.space))
    protocol = {**sweep.protocol(), "storage": url.split(":", 1)[0], "workers": count}
    record = best_record(optuna_study, sweep.study.trials, protocol)
    paths.write_metrics(
        folder / paths.BEST_TRIAL, {**record, result_code.CODE: result_code.stamp("sweep")}
    )
    write_figures(folder / paths.SWEEP_FIGURES, optuna_study)
    print(
        f"{sweep.name}: best val/ppl {record['val/ppl']:.3f} at trial {record['trial']} "
        f"{record['params']}; {tally(optuna_study).finished} trials finished by {count} worker(s)"
    )


def worker(
    study: Annotated[str, typer.Argument(help="The study (a key of sweeps.studies).")],
    params: ParamsFile = DEFAULT_PARAMS,
) -> None:
    """Join study STUDY in the shared database with `sweeps.workers` workers, until it is full.

    Start one on every machine that should help (the same commit, the token files there).

    Reads: what `attnlab sweep run` reads; `ATTNLAB_OPTUNA_STORAGE` (or `sweeps.storage`)
    must be a database every worker reaches, e.g.
    `postgresql+psycopg2://user@host:5432/db`.

    Writes: trials into that database and W&B runs under `WANDB_DIR`; nothing in the project.
    """
    sweep, optuna_study, url, count = _run(params, study, worker=True)
    from attnlab.sweeps import redact, tally

    print(
        f"{sweep.name} on {redact(url)}: {tally(optuna_study).finished} trials finished; "
        f"this machine's {count} worker(s) are done"
    )


COMMANDS = {"run": main, "worker": worker}

if __name__ == "__main__":
    run_stage(main)
