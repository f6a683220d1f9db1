"""What one training run hands back: the trained model, its metrics, its resume state.

:func:`~attnlab.training.train_variant` returns a :class:`TrainResult`; the stage writes
its metrics (:func:`run_metrics`, the ``train.json`` of every trained experiment in
docs/catalogue.md) and curve, and only then discards the resume state.
"""

import logging
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import lightning.pytorch as pl
from lightning.pytorch.utilities.rank_zero import rank_zero_only

from attnlab.models import LanguageModel
from attnlab.runs.curve_files import final_loss
from attnlab.training.job import TrainJob
from attnlab.training.lock import RunLocked, exclusive_run
from attnlab.training.loss_curve import LOSS
from attnlab.training.trainer import device_name

log = logging.getLogger(__name__)
say = rank_zero_only(log.info)  # one line per run, not one per DDP rank


@dataclass
class TrainResult:
    """The outcome of :func:`train_variant` in this process.

    Only the process with ``is_global_zero`` writes outputs; in the other DDP ranks
    ``metrics`` and ``curve`` are empty. ``provenance`` says where the numbers came from:
    the baseline commit, whether the checkout differed, the DVC experiment and the W&B
    run (None when W&B was off). ``along`` is the folder of the weights kept along
    training (:mod:`attnlab.training.along_steps`), inside the resume state; None when none.
    """

    model: LanguageModel
    config: dict[str, Any]
    metrics: dict[str, Any]
    curve: list[tuple[int, float]]
    is_global_zero: bool
    provenance: dict[str, Any] = field(default_factory=dict)
    resume_state: Path | None = None
    along: Path | None = None

    def discard_resume_state(self) -> None:
        """Remove the finished run's resume state; call it once every output is written.

        Until then a failed write (a full disk) can be retried by rerunning the stage,
        which resumes at the last step instead of training again. The folder is left
        alone while another process holds its lock: that process owns it now.
        """
        folder = self.resume_state
        if folder is None or not folder.exists():  # a group's members share one folder
            return
        try:
            with exclusive_run(folder):
                shutil.rmtree(folder, ignore_errors=True)
        except RunLocked:
            say("left %s in place: another trainer of this configuration holds it", folder)
        self.resume_state = None


def run_metrics(
    job: TrainJob,
    trainer: pl.Trainer,
    model: LanguageModel,
    points: list[tuple[int, float]],
    wall_s: float,
    first_step: int,
) -> dict[str, Any]:
    """The stage's ``train.json``: ``train/loss`` is the mean over the last 5 % of steps.

    Args:
        job: The job that trained.
        trainer: Its trainer, after the fit (the device and the number of processes).
        model: The trained model (its parameter count).
        points: The per-step loss curve.
        wall_s: The fit's wall time, seconds.
        first_step: The step the fit resumed at (0 for a fresh run): ``tokens_per_s``
            counts only the tokens trained in this process's fit.
    """
    loss, window = final_loss(points)
    trained = (job.steps - first_step) * job.tokens_per_step
    return {
        LOSS: loss,
        "train/loss_window": window,
        **job.seeds(),
        "steps": job.steps,
        "tokens_seen": job.steps * job.tokens_per_step,
        "wall_s": round(wall_s, 3),
        "tokens_per_s": round(trained / wall_s, 1) if wall_s > 0 else 0.0,
        "resumed_from_step": first_step,
        "params": sum(p.numel() for p in model.parameters()),
        "device": device_name(trainer),
        "world_size": trainer.world_size,
        "precision": job.trainer.precision,
    }
