"""The objective of a study of the Sweeps of docs/catalogue.md: train one trial, score it.

A trial is trained by the same code as the ``train`` stage
(:func:`attnlab.training.train_variant`) at its study's reduced budget, drawing the same
``val/ppl`` curve (:class:`attnlab.metrics.ValidationCurve`, Lightning's validation
loop), whose points feed the median pruner as it trains; its value is P0's ``val/ppl`` on
the whole validation split (:func:`attnlab.metrics.perplexity`).

A trial writes checkpoints like a ``train`` run. A retry (SIGTERM stopped the trial, or
its worker died) trains as the first trial of its retry chain: the same run, so on the
machine that stopped it the retry continues from its last checkpoint instead of training
its steps again. However else a trial ends (finished, pruned, raised) nothing resumes it,
and its checkpoints are removed.
"""

import math
import shutil
from pathlib import Path
from typing import Any

import optuna
from optuna.storages import RetryFailedTrialCallback
from torch import Tensor

from attnlab.config.sweeps import CategoricalAxis, FloatAxis, IntAxis
from attnlab.metrics import ValidationCurve, WholeSplitScore
from attnlab.metrics.validation_curve import of_split
from attnlab.sweeps.callbacks import CurvePruning, TrialRecord
from attnlab.sweeps.definition import Sweep
from attnlab.training import FitOptions, TrainingInterrupted, train_variant
from attnlab.training.job import checkpoint_dir, fingerprint


def suggest(trial: optuna.Trial, space: dict[str, IntAxis | FloatAxis | CategoricalAxis]) -> dict:
    """Draw one value per axis from the trial's sampler (or its fixed params, on a retry)."""
    values: dict[str, Any] = {}
    for name, axis in space.items():
        if isinstance(axis, IntAxis):
            values[name] = trial.suggest_int(
                name, axis.low, axis.high, step=axis.step, log=axis.log
            )
        elif isinstance(axis, FloatAxis):
            values[name] = trial.suggest_float(name, axis.low, axis.high, log=axis.log)
        else:
            values[name] = trial.suggest_categorical(name, axis.choices)
    return values


def first_of_chain(trial: optuna.Trial) -> int:
    """The number of the trial that ``trial`` retries (the chain's first), or its own."""
    frozen = next(t for t in trial.study.get_trials(deepcopy=False) if t.number == trial.number)
    retried = RetryFailedTrialCallback.retried_trial_number(frozen)
    return trial.number if retried is None else retried


class TrialObjective:
    """The objective of a study: train one trial, return its whole-split ``val/ppl``.

    Args:
        sweep: The study.
        train_tokens: The train split's token file.
        val_tokens: (N,) the validation split.
        run_root: Where resume state and the trials' curves live (outside the project).
        wandb_folder: The parent of W&B's ``wandb/`` folder.
        token_bytes: (V,) the bytes of each token id, for ``val/bpb``; None leaves it out.
    """

    def __init__(
        self,
        sweep: Sweep,
        train_tokens: Path,
        val_tokens: Tensor,
        run_root: Path,
        wandb_folder: Path,
        token_bytes: Tensor | None = None,
    ) -> None:
        self.sweep, self.train_tokens, self.val_tokens = sweep, train_tokens, val_tokens
        self.token_bytes = token_bytes
        self.run_root, self.wandb_folder = run_root, wandb_folder

    def _curve(self, number: int, block_size: int) -> ValidationCurve:
        path = self.run_root / "sweeps" / self.sweep.name / f"trial-{number}" / "val_ppl.csv"
        every = self.sweep.params.evaluate.curve.every(self.sweep.budget)
        batch_size = self.sweep.params.evaluate.batch_size
        return of_split(self.val_tokens, block_size, every, path, batch_size)

    def __call__(self, trial: optuna.Trial) -> float:
        """Train the trial's variant (or continue its chain's); prune it; score it.

        Raises:
            optuna.TrialPruned: the median pruner stopped it.
            ValueError: training diverged (a non-finite ``val/ppl``).
            TrainingInterrupted: SIGTERM or SIGINT stopped it; its checkpoint is kept for
                the retry.
        """
        first = first_of_chain(trial)
        job = self.sweep.trial_job(first, suggest(trial, self.sweep.study.space))
        block_size = job.variant.model.block_size
        curve = self._curve(first, block_size)
        score = WholeSplitScore(
            self.val_tokens, block_size, self.sweep.params.evaluate.batch_size, self.token_bytes
        )
        record = TrialRecord(trial, self.sweep.name, score)
        resume_state = checkpoint_dir(
            self.run_root, job, fingerprint(job, self.train_tokens, curve)
        )
        try:
            options = FitOptions(
                self.train_tokens,
                self.run_root,
                self.wandb_folder,
                resume=first != trial.number,  # a fresh trial never reads a stale folder
                tags=(self.sweep.name,),
            )
            train_variant(
                job, options, curve=curve, callbacks=[CurvePruning(trial, curve), score, record]
            )
        except TrainingInterrupted:
            raise  # its checkpoint stays: the retry continues from it
        except BaseException:
            shutil.rmtree(resume_state, ignore_errors=True)  # pruned or raised: never resumed
            raise
        shutil.rmtree(resume_state, ignore_errors=True)
        if record.value is None or not math.isfinite(record.value):
            raise ValueError(f"val/ppl is {record.value}: the trial diverged")
        return record.value
