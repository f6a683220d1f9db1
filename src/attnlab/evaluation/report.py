"""One variant's evaluation record: every measurement its experiment asks for (E02-E18).

Every variant gets P0's perplexity on both splits (``val/ppl``, ``train/ppl``; E18 compares
them) and its parameters per component. The extra measurements are chosen by name, as
data (``measure`` of the experiments in the catalogue, :mod:`attnlab.catalogue`, whose
rows read the run):

- ``extrapolation`` (E13): ``val/ppl@L`` for every evaluation length L;
- ``score_stats`` (E08, E09): the attention statistics at initialisation and after training;
- ``grad_norms`` (E11): per-block gradient norms at initialisation.

The record also carries a ``protocol`` field: one sentence per measurement it holds, saying
exactly how the numbers were made.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from torch import Tensor

from attnlab.evaluation.attention_stats import SCORE_STATS_PROTOCOL, attention_statistics
from attnlab.evaluation.bpb import bits_per_byte, scored_bytes
from attnlab.evaluation.gradients import GRAD_NORM_PROTOCOL, block_gradient_norms, parameter_counts
from attnlab.evaluation.initial import build_initial_model
from attnlab.evaluation.perplexity import (
    EXTRAPOLATION_PROTOCOL,
    PERPLEXITY_PROTOCOL,
    perplexity,
    perplexity_by_length,
)
from attnlab.evaluation.windows import sample_windows
from attnlab.models import LanguageModel
from attnlab.training.data import StepBatch, draw_windows


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


def stats_batch(inputs: EvaluationInputs) -> Tensor:
    """E09's fixed batch: (B, T) the inputs of ``stats_windows`` validation windows."""
    windows = sample_windows(
        inputs.val_tokens,
        inputs.context,
        inputs.stats_windows,
        inputs.seed,
        key="evaluate.stats_windows",
    )
    return windows[:, :-1]  # (B, T): the inputs of each window


def gradient_batch(inputs: EvaluationInputs) -> StepBatch:
    """E11's one batch: the training batch of step 0 drawn from the root seed."""
    return draw_windows(
        inputs.train_tokens, inputs.context, inputs.train_batch_size, inputs.seed, step=0
    )


def _score_stats(inputs: EvaluationInputs) -> dict[str, float]:
    batch = stats_batch(inputs)
    return {
        **attention_statistics(inputs.initial_model(), batch, prefix="init/"),
        **attention_statistics(inputs.model, batch, prefix="trained/"),
    }


def _grad_norms(inputs: EvaluationInputs) -> dict[str, float]:
    batch = gradient_batch(inputs)
    return block_gradient_norms(inputs.initial_model().train(), batch.x, batch.y)


# Every measurement by name, with the sentence that goes into the record's protocol.
MEASUREMENTS: dict[str, tuple[Callable[[EvaluationInputs], dict[str, float]], str]] = {
    "perplexity": (_perplexity, PERPLEXITY_PROTOCOL),
    "params": (_params, "parameters per component, counted on the built module."),
    "extrapolation": (_extrapolation, EXTRAPOLATION_PROTOCOL),
    "score_stats": (_score_stats, SCORE_STATS_PROTOCOL),
    "grad_norms": (_grad_norms, GRAD_NORM_PROTOCOL),
}
ALWAYS = ("perplexity", "params")
EXTRA_MEASUREMENTS = tuple(name for name in MEASUREMENTS if name not in ALWAYS)


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
        measure, description = MEASUREMENTS[name]
        record.update(measure(inputs))
        protocol[name] = description
    record["protocol"] = protocol
    return record
