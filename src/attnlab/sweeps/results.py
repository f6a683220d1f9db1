"""What a finished study leaves behind: best.json, trials.csv and Optuna's own figures.

The record of the Sweeps of docs/catalogue.md: ``best.json`` (a DVC metric: the best trial's
``val/ppl``, params and W&B run, and how many trials ended in each state), ``trials.csv``
(one row per trial: number, state, value (COMPLETE trials only), duration, W&B run id,
the worker that ran it, the trial it retries, the step the pruner stopped it at (PRUNED
trials only), a note, then one column per searched parameter) and figures drawn with
``optuna.visualization.matplotlib``: the optimisation history, the parameter importances,
a slice of every searched axis, the intermediate values (where pruning shows) and the
parallel coordinates (every trial's params against its value).
"""

import csv
import logging
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import optuna
from matplotlib import pyplot as plt
from matplotlib.axes import Axes
from optuna.exceptions import ExperimentalWarning
from optuna.storages.journal import JournalFileBackend, JournalStorage
from optuna.trial import FrozenTrial, TrialState
from optuna.visualization import matplotlib as optuna_plots

from attnlab.sweeps.study import (
    ERROR_ATTR,
    INTERRUPTED_ATTR,
    SURPLUS_ATTR,
    WANDB_ATTR,
    WORKER_ATTR,
)

log = logging.getLogger(__name__)

FIGURES: dict[str, Callable[[optuna.Study], Any]] = {
    "optimization_history.png": optuna_plots.plot_optimization_history,
    "param_importances.png": optuna_plots.plot_param_importances,
    "slice.png": optuna_plots.plot_slice,
    "intermediate_values.png": optuna_plots.plot_intermediate_values,
    "parallel_coordinate.png": optuna_plots.plot_parallel_coordinate,
}
_Y_LABELS = {
    "optimization_history.png": "val/ppl (whole validation split)",
    "intermediate_values.png": "val/ppl (the curve's fixed validation windows)",
}
_COLUMNS = (
    "number", "state", "value", "duration_s", "wandb_run_id", "worker", "retry_of",
    "pruned_at", "note",
)  # fmt: skip


def _note(trial: FrozenTrial) -> str:
    if trial.user_attrs.get(SURPLUS_ATTR):
        return "surplus: asked for after the study was full"
    if interrupted := trial.user_attrs.get(INTERRUPTED_ATTR):
        signal_name = interrupted if isinstance(interrupted, str) else "SIGTERM"  # older studies
        return f"stopped by {signal_name}; its params were handed to the next worker"
    if ERROR_ATTR in trial.user_attrs:
        return str(trial.user_attrs[ERROR_ATTR]).splitlines()[0][:200]
    if (step := _pruned_at(trial)) is not None:
        return f"pruned at step {step} (curve val/ppl {trial.intermediate_values[step]:.4g})"
    if trial.state == TrialState.FAIL:
        return "its worker stopped sending heartbeats (killed?)"
    return ""


def _pruned_at(trial: FrozenTrial) -> int | None:
    """The step of a PRUNED trial's last curve point, where the pruner stopped it."""
    pruned = trial.state == TrialState.PRUNED and trial.intermediate_values
    return max(trial.intermediate_values) if pruned else None


def trial_rows(study: optuna.Study, axes: list[str]) -> list[dict[str, Any]]:
    """One row per trial, in trial-number order; ``axes`` are the searched parameters."""
    rows = []
    for trial in sorted(study.get_trials(deepcopy=False), key=lambda t: t.number):
        duration = trial.duration.total_seconds() if trial.duration else None
        row = {
            "number": trial.number,
            "state": trial.state.name,
            # A pruned trial's Optuna value is its last curve point, not the objective.
            "value": trial.value if trial.state == TrialState.COMPLETE else None,
            "duration_s": round(duration, 3) if duration is not None else None,
            "wandb_run_id": trial.user_attrs.get(WANDB_ATTR),
            "worker": trial.user_attrs.get(WORKER_ATTR),
            "retry_of": trial.system_attrs.get("failed_trial"),
            "pruned_at": _pruned_at(trial),
            "note": _note(trial),
        }
        row.update({axis: trial.params.get(axis) for axis in axes})
        rows.append(row)
    return rows


def write_trials(path: Path, study: optuna.Study, axes: list[str]) -> None:
    """Write ``trials.csv`` (empty cells where a trial has no value, duration or run)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=[*_COLUMNS, *axes], lineterminator="\n")
        writer.writeheader()
        for row in trial_rows(study, axes):
            writer.writerow({k: "" if v is None else v for k, v in row.items()})


def best_record(study: optuna.Study, target: int, protocol: dict[str, Any]) -> dict[str, Any]:
    """The content of ``best.json``: the best COMPLETE trial, every state's count, the cost.

    The cost is the trials' summed training time (``trial_s``) and the time from the
    first trial's start to the last one's end (``wall_s``), which workers shorten.

    Raises:
        ValueError: no trial completed, so there is no best.
    """
    complete = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    if not complete:
        raise ValueError(f"study {study.study_name}: no trial completed")
    best = min(complete, key=lambda t: (t.value, t.number))
    counts = {state.name: 0 for state in TrialState}
    for trial in study.get_trials(deepcopy=False):
        counts[trial.state.name] += 1
    return {
        "study": study.study_name,
        "val/ppl": best.value,
        "trial": best.number,
        "params": best.params,
        "wandb_run_id": best.user_attrs.get(WANDB_ATTR),
        "trials": {"target": target, **counts},
        "cost": _cost(study.get_trials(deepcopy=False)),
        "protocol": protocol,
    }


def _cost(trials: list[FrozenTrial]) -> dict[str, float]:
    ran = [t for t in trials if t.datetime_start and t.datetime_complete]
    if not ran:
        return {"trial_s": 0.0, "wall_s": 0.0}
    first = min(t.datetime_start for t in ran)
    last = max(t.datetime_complete for t in ran)
    spent = sum((t.datetime_complete - t.datetime_start).total_seconds() for t in ran)
    return {"trial_s": round(spent, 1), "wall_s": round((last - first).total_seconds(), 1)}


def write_snapshot(path: Path, study: optuna.Study, storage: str) -> None:
    """Copy ``study`` from its (shared) ``storage`` into a fresh journal file at ``path``.

    The copy holds every trial with its params, values, intermediate values and
    attributes, so it can be read with ``optuna.load_study`` or ``optuna-dashboard``
    without the database server, like the embedded study it stands in for.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    optuna.copy_study(
        from_study_name=study.study_name,
        from_storage=storage,
        to_storage=JournalStorage(JournalFileBackend(str(path))),
    )


def write_figures(folder: Path, study: optuna.Study) -> list[Path]:
    """Draw every figure of :data:`FIGURES` into ``folder``; returns the paths written.

    A figure Optuna cannot draw (e.g. importances from too few trials) is replaced by a
    page that says why, so the stage's outputs always exist.
    """
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, plot in FIGURES.items():
        path = folder / name
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ExperimentalWarning)
            try:
                drawn = plot(study)
            except (ValueError, RuntimeError, ZeroDivisionError) as err:
                log.warning("%s: %s", name, err)
                drawn = _placeholder(name, err)
        axes = drawn.ravel() if hasattr(drawn, "ravel") else [drawn]
        if name in _Y_LABELS:
            axes[0].set_ylabel(_Y_LABELS[name])
        if name == "intermediate_values.png":
            axes[0].set_yscale("log")  # step 0 (an untrained model) would flatten the rest
        figure = axes[0].get_figure()
        figure.set_size_inches(max(6.0, 3.5 * len(axes)), 4.5)
        figure.savefig(path, dpi=110, bbox_inches="tight", metadata={"Software": None})
        plt.close(figure)  # Optuna draws through pyplot: free each figure at once
        written.append(path)
    return written


def _placeholder(name: str, err: Exception) -> Axes:
    _, ax = plt.subplots()
    ax.axis("off")
    ax.text(0.5, 0.5, f"{name}: not drawn\n{err}", ha="center", va="center", wrap=True)
    return ax
