"""The two Lightning callbacks a trial adds to the training every stage runs (Sweeps, E08, E11).

- :class:`CurvePruning` is optuna-integration's ``PyTorchLightningPruningCallback`` on the
  ``val/ppl`` points of Lightning's validation loop (the curve of
  :class:`~attnlab.metrics.ValidationCurve`), reported at the global step: the parent
  reports at the epoch, and attnlab trains one long epoch. A retry that resumes its
  chain's checkpoint reports the points the checkpoint brought back first.
- :class:`TrialRecord` ties the trial to its W&B run (run id into the trial, study and
  trial into the run), scores the finished model on the whole validation split (P0's
  ``val/ppl``, the objective) and marks the run's summary complete, pruned or failed.
  Lightning's ``WandbLogger`` never finishes a run; the training code finishes every run
  it starts, whatever the fit's fate, so no trial logs into another's run (PITFALLS 5).
"""

import logging
from collections.abc import Callable
from typing import Any

import lightning.pytorch as pl
import optuna
from lightning.pytorch.callbacks import Callback
from lightning.pytorch.loggers import WandbLogger
from optuna_integration import PyTorchLightningPruningCallback

from attnlab.metrics import ValidationCurve, WholeSplitScore
from attnlab.sweeps.study import WANDB_ATTR

log = logging.getLogger(__name__)
METRIC = "val/ppl"


class CurvePruning(PyTorchLightningPruningCallback):
    """Report each ``val/ppl`` point to the trial at its global step; prune when told to.

    The trial's trainer must draw ``curve`` (``train_variant(curve=...)``). One process
    per trial: the parent's DDP path is not needed, and refused.
    """

    def __init__(self, trial: optuna.Trial, curve: ValidationCurve) -> None:
        super().__init__(trial, METRIC)
        self.curve = curve

    def on_train_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        """On a resume, report the points the stopped trial drew before its checkpoint.

        The curve runs first and has already cut them back to the resumed step; the
        median pruner judges them as it judged the stopped trial, so nothing is pruned here.
        """
        if trainer.global_step > 0:
            for step, ppl in self.curve.points:
                self._trial.report(ppl, step=step)

    def on_fit_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        """Refuse DDP (see the class docstring), then let the parent set up."""
        if trainer.world_size > 1:
            raise ValueError("a sweep trial trains in one process (trainer devices 1)")
        super().on_fit_start(trainer, pl_module)

    def on_validation_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        """The parent's report and decision, at the global step instead of the epoch.

        Step 0's point comes from Lightning's sanity check, which the parent skips (it
        would report epoch 0 twice); here it is the curve's first point, reported once.
        """
        step = trainer.global_step
        self._trial.report(trainer.callback_metrics[self.monitor].item(), step=step)
        if self._trial.should_prune():
            raise optuna.TrialPruned(f"Trial was pruned at step {step}.")


class TrialRecord(Callback):
    """Link the trial and its W&B run, and score the trained model (the objective).

    Args:
        trial: The Optuna trial.
        study: The study's name in params.
        score: The whole-split score, which must come before this callback.
    """

    def __init__(self, trial: optuna.Trial, study: str, score: WholeSplitScore) -> None:
        super().__init__()
        self.trial, self.study, self.score = trial, study, score
        self.value: float | None = None

    @staticmethod
    def _each_run(trainer: pl.Trainer, update: Callable[[Any], None]) -> None:
        """Apply ``update`` to the trial's W&B run, if any; W&B never fails a trial."""
        for logger in trainer.loggers:
            if not isinstance(logger, WandbLogger):
                continue
            try:
                update(logger.experiment)
            except Exception as err:
                log.warning("W&B: %s: %s (the trial goes on)", type(err).__name__, err)

    def on_fit_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        """Record the W&B run id in the trial, and the trial in the run's config.

        At fit start, before any callback's ``on_train_start`` can raise.
        """

        def link(run: Any) -> None:
            self.trial.set_user_attr(WANDB_ATTR, run.id)
            optuna_config = {"study": self.study, "trial": self.trial.number, **self.trial.params}
            run.config.update({"optuna": optuna_config}, allow_val_change=True)

        self._each_run(trainer, link)

    def on_train_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        """Take the whole-split ``val/ppl`` (the objective) and mark the run complete."""
        self.value = self.score.values.get(METRIC)
        self._each_run(trainer, lambda run: run.summary.update({"optuna/state": "complete"}))

    def on_exception(
        self, trainer: pl.Trainer, pl_module: pl.LightningModule, exception: BaseException
    ) -> None:
        """Mark the run pruned or failed; the training code then finishes it."""
        state = "pruned" if isinstance(exception, optuna.TrialPruned) else "failed"
        self._each_run(trainer, lambda run: run.summary.update({"optuna/state": state}))
