"""The evaluate stage's measurements, by name: at the end of training and along it (E02-E18).

Every variant gets P0's perplexity on both splits (``val/ppl``, ``train/ppl``; E18 compares
them) and its parameters per component. The extra measurements are chosen by name, as
data (``measure`` of the experiments in the catalogue, :mod:`attnlab.catalogue`, whose
rows read the run):

- ``extrapolation`` (E13): ``val/ppl@L`` for every evaluation length L;
- ``score_stats`` (E08, E09): the attention statistics at initialisation and after training;
- ``grad_norms`` (E11): per-block gradient norms at initialisation.

The two last are also taken at every step the training kept (the catalogue's ``along``),
exactly as at the end and at initialisation: the same fixed batches, drawn from the root
seed, so a curve's points differ only by the weights. The record carries a ``protocol``
field: one sentence per measurement it holds, saying exactly how the numbers were made.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from attnlab.data.batches import StepBatch, draw_windows
from attnlab.evaluation.attention_stats import SCORE_STATS_PROTOCOL, attention_statistics
from attnlab.evaluation.gradients import (
    GRAD_NORM_PROTOCOL,
    block_gradient_norms,
    eval_mode_gradient_norms,
    parameter_counts,
)
from attnlab.evaluation.initial import build_initial_model
from attnlab.evaluation.names import EXTRAPOLATION, GRAD_NORMS, PARAMS, PERPLEXITY, SCORE_STATS
from attnlab.metrics.bpb import bits_per_byte, scored_bytes
from attnlab.metrics.perplexity import (
    EXTRAPOLATION_PROTOCOL,
    PERPLEXITY_PROTOCOL,
    perplexity,
    perplexity_by_length,
)
from attnlab.metrics.windows import sample_windows
from attnlab.models import LanguageModel
from attnlab.runs.along_weights import AlongWeights

ALONG_PROTOCOL = (
    "at every step whose weights the training kept (step 0, the powers of two below the "
    "variant's steps scaled by budget.scale, and the last step; each file checked against "
    "its SHA-256 in the manifest first), the measurement of the same name on the same "
    "fixed batch: score statistics without the init/ or trained/ prefix, gradient norms "
    "of the kept weights in training mode, dropout drawn from the root seed. "
    "along.steps lists the steps, along.metrics each key's value at every step in order."
)


@dataclass(frozen=True)
class EvaluationInputs:
    """What the measurements of one trained variant read.

    Attributes:
        model: the trained model; its ``config.block_size`` is the training context.
        seed: the root seed: picks the fixed batches (E09's windows, E11's batch), the
            same for every run, so the runs of one variant differ only by training.
        init_seed: the seed the run initialised its weights with: rebuilds that model.
        val_tokens: (N_val,) the validation split.
        train_tokens: (N_train,) the train split.
        batch_size: windows per forward pass when scoring perplexity (speed, not result).
        lengths: E13's evaluation lengths.
        stats_windows: how many validation windows make E09's fixed batch.
        train_batch_size: the variant's training batch (E11's one batch has this size).
        token_bytes: (V,) the bytes each token id stands for; with it both splits also get
            bits per byte (``val/bpb``, ``train/bpb``), which no vocabulary change moves.
    """

    model: LanguageModel
    seed: int
    init_seed: int
    val_tokens: Tensor
    train_tokens: Tensor
    batch_size: int
    lengths: tuple[int, ...]
    stats_windows: int
    train_batch_size: int
    token_bytes: Tensor | None = None

    @property
    def context(self) -> int:
        """The training context, at which ``val/ppl`` and ``train/ppl`` are measured."""
        return self.model.config.block_size

    def initial_model(self) -> LanguageModel:
        """The run's model at initialisation, rebuilt from its init seed, on the same device."""
        device = next(self.model.parameters()).device
        return build_initial_model(self.model.config, self.init_seed).to(device)


def _perplexity(inputs: EvaluationInputs) -> dict[str, float]:
    metrics: dict[str, float] = {}
    for split, tokens in (("val", inputs.val_tokens), ("train", inputs.train_tokens)):
        result = perplexity(inputs.model, tokens, inputs.context, inputs.batch_size)
        metrics[f"{split}/ppl"] = result.ppl
        metrics[f"{split}/tokens"] = result.tokens
        if inputs.token_bytes is not None:
            metrics[f"{split}/bpb"] = bits_per_byte(
                result, scored_bytes(tokens, inputs.token_bytes)
            )
    return metrics


def _params(inputs: EvaluationInputs) -> dict[str, float]:
    return dict(parameter_counts(inputs.model))


def _extrapolation(inputs: EvaluationInputs) -> dict[str, float]:
    results = perplexity_by_length(
        inputs.model, inputs.val_tokens, inputs.lengths, inputs.batch_size
    )
    return {f"val/ppl@{length}": result.ppl for length, result in results.items()}


def _stats_batch(inputs: EvaluationInputs) -> Tensor:
    """E09's fixed batch: (B, T) the inputs of ``stats_windows`` validation windows."""
    windows = sample_windows(
        inputs.val_tokens,
        inputs.context,
        inputs.stats_windows,
        inputs.seed,
        key="evaluate.stats_windows",
    )
    return windows[:, :-1]  # (B, T): the inputs of each window


def _gradient_batch(inputs: EvaluationInputs) -> StepBatch:
    """E11's one batch: the training batch of step 0 drawn from the root seed."""
    return draw_windows(
        inputs.train_tokens, inputs.context, inputs.train_batch_size, inputs.seed, step=0
    )


def _score_stats(inputs: EvaluationInputs) -> dict[str, float]:
    batch = _stats_batch(inputs)
    return {
        **attention_statistics(inputs.initial_model(), batch, prefix="init/"),
        **attention_statistics(inputs.model, batch, prefix="trained/"),
    }


def _seeded_gradient_norms(model: LanguageModel, inputs: EvaluationInputs) -> dict[str, float]:
    batch = _gradient_batch(inputs)
    # Training mode draws dropout masks: from the root seed, so that every process draws
    # the same ones (PyTorch seeds its global generator at random on start-up).
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(inputs.seed)
        return block_gradient_norms(model.train(), batch.x, batch.y)


def _grad_norms(inputs: EvaluationInputs) -> dict[str, float]:
    model = inputs.initial_model()
    batch = _gradient_batch(inputs)
    return {
        **_seeded_gradient_norms(model, inputs),
        **eval_mode_gradient_norms(model, batch.x, batch.y),  # E11's eval-mode protocol
    }


def _score_stats_along(model: LanguageModel, inputs: EvaluationInputs) -> dict[str, float]:
    return attention_statistics(model, _stats_batch(inputs))


@dataclass(frozen=True)
class Measurement:
    """How one named measurement is taken, and the sentence the record's protocol gives it.

    Attributes:
        measure: Takes it on the trained run (and, where it says so, the initial model).
        protocol: How the numbers are made, in one sentence.
        along: Takes it on the weights of one kept step; None when it is never taken
            along training.
    """

    measure: Callable[[EvaluationInputs], dict[str, float]]
    protocol: str
    along: Callable[[LanguageModel, EvaluationInputs], dict[str, float]] | None = None


# The one registry: every measurement by name (:mod:`attnlab.evaluation.names`).
MEASUREMENTS: dict[str, Measurement] = {
    PERPLEXITY: Measurement(_perplexity, PERPLEXITY_PROTOCOL),
    PARAMS: Measurement(_params, "parameters per component, counted on the built module."),
    EXTRAPOLATION: Measurement(_extrapolation, EXTRAPOLATION_PROTOCOL),
    SCORE_STATS: Measurement(_score_stats, SCORE_STATS_PROTOCOL, along=_score_stats_along),
    GRAD_NORMS: Measurement(_grad_norms, GRAD_NORM_PROTOCOL, along=_seeded_gradient_norms),
}
ALWAYS = (PERPLEXITY, PARAMS)
EXTRA_MEASUREMENTS = tuple(name for name in MEASUREMENTS if name not in ALWAYS)
# Those also taken along training: a view of the registry, not a second one.
ALONG_MEASUREMENTS = {name: m.along for name, m in MEASUREMENTS.items() if m.along is not None}


def evaluate_variant(inputs: EvaluationInputs, extra: Sequence[str]) -> dict[str, Any]:
    """Run the measurements every variant gets plus ``extra``, in that order.

    Returns:
        A flat mapping of metric name to number, plus ``protocol``: measurement name to
        the sentence describing it, for the measurements run.

    Raises:
        ValueError: an unknown measurement name.
    """
    unknown = sorted(set(extra) - set(EXTRA_MEASUREMENTS))
    if unknown:
        raise ValueError(f"unknown measurement {unknown[0]!r}; known: {EXTRA_MEASUREMENTS}")
    record: dict[str, Any] = {}
    protocol: dict[str, str] = {}
    for name in (*ALWAYS, *extra):
        record.update(MEASUREMENTS[name].measure(inputs))
        protocol[name] = MEASUREMENTS[name].protocol
    record["protocol"] = protocol
    return record


def measure_along(
    inputs: EvaluationInputs, kept: Sequence[AlongWeights], names: Sequence[str]
) -> dict[str, Any]:
    """The measurements ``names`` at every kept step, as the record's ``along`` field.

    Args:
        inputs: The run's evaluation inputs (its model gives the architecture and device).
        kept: The kept steps' weights, in step order
            (:func:`attnlab.runs.along_weights.read_along`).
        names: Measurements of :data:`ALONG_MEASUREMENTS` (the catalogue's ``along``).

    Returns:
        ``{"steps": [...], "metrics": {key: [value at each step]}}``.

    Raises:
        ValueError: an unknown measurement name.
    """
    unknown = sorted(set(names) - set(ALONG_MEASUREMENTS))
    if unknown:
        raise ValueError(
            f"no along-training measurement {unknown[0]!r}; known: {tuple(ALONG_MEASUREMENTS)}"
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
