"""E09's score statistics and E11's gradient norms at every step kept along training.

The train stage keeps a run's weights at log-spaced steps (:mod:`attnlab.training.along`)
when an experiment of the catalogue measures it along training (its ``along``). Each kept
step is measured exactly as the end of the run and the initialisation are: the same fixed
batches, drawn from the root seed (:func:`~attnlab.evaluation.report.stats_batch`,
:func:`~attnlab.evaluation.report.gradient_batch`), so a curve's points differ only by
the weights.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from attnlab.evaluation.attention_stats import attention_statistics
from attnlab.evaluation.gradients import block_gradient_norms
from attnlab.evaluation.report import EvaluationInputs, gradient_batch, stats_batch
from attnlab.models import LanguageModel
from attnlab.training.artifacts import AlongWeights

ALONG_PROTOCOL = (
    "at every step whose weights the training kept (step 0, the powers of two below the "
    "variant's steps scaled by budget.scale, and the last step; each file checked against "
    "its SHA-256 in the manifest first), the measurement of the same name on the same "
    "fixed batch: score statistics without the init/ or trained/ prefix, gradient norms "
    "of the kept weights in training mode, dropout drawn from the root seed. "
    "along.steps lists the steps, along.metrics each key's value at every step in order."
)


def _score_stats(model: LanguageModel, inputs: EvaluationInputs) -> dict[str, float]:
    return attention_statistics(model, stats_batch(inputs))


def _grad_norms(model: LanguageModel, inputs: EvaluationInputs) -> dict[str, float]:
    batch = gradient_batch(inputs)
    # A dropout mask drawn from the root seed, the same at every step and in every process.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(inputs.seed)
        return block_gradient_norms(model.train(), batch.x, batch.y)


ALONG_MEASUREMENTS: dict[str, Callable[[LanguageModel, EvaluationInputs], dict[str, float]]] = {
    "score_stats": _score_stats,
    "grad_norms": _grad_norms,
}


def measure_along(
    inputs: EvaluationInputs, kept: Sequence[AlongWeights], names: Sequence[str]
) -> dict[str, Any]:
    """The measurements ``names`` at every kept step, as the record's ``along`` field.

    Args:
        inputs: The run's evaluation inputs (its model gives the architecture and device).
        kept: The kept steps' weights, in step order
            (:func:`attnlab.training.artifacts.read_along`).
        names: Measurements of :data:`ALONG_MEASUREMENTS` (the catalogue's ``along``).

    Returns:
        ``{"steps": [...], "metrics": {key: [value at each step]}}``.

    Raises:
        ValueError: an unknown measurement name.
    """
    unknown = sorted(set(names) - set(ALONG_MEASUREMENTS))
    if unknown:
        raise ValueError(
            f"no along-training measurement {unknown[0]!r}; known: {ALONG_MEASUREMENTS}"
        )
    device = next(inputs.model.parameters()).device
    with torch.random.fork_rng(devices=[]):  # building draws initial weights: not from ours
        model = LanguageModel(inputs.model.config).to(device)
    metrics: dict[str, list[float]] = {}
    for weights in kept:
        model.load_state_dict(weights.state)
        for name in names:
            for key, value in ALONG_MEASUREMENTS[name](model, inputs).items():
                metrics.setdefault(key, []).append(value)
    return {"steps": [weights.step for weights in kept], "metrics": metrics}
