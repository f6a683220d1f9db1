"""Gradient norms per block (E11), and parameters per component.

E11's claim: with post-norm the gradient reaching each block grows with depth, which is why
post-norm needs warmup. The measurement is one training batch, at initialisation (and at
every step kept along training): the loss gradient's L2 norm over each block's parameters,
and the ratio of the last block's to the first's. Which parameters count is a choice, so a
second definition is recorded beside it: the weight matrices alone (no biases, no
LayerNorm gains) as their per-entry RMS, which the catalogue's ``weights-rms`` protocol
of E11 reads.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from attnlab.models import LanguageModel, count_parameters_by_module

GRAD_NORM_PROTOCOL = (
    "the model rebuilt from the run's init seed, before any step, in training mode "
    "(dropout masks drawn from the root seed); one "
    "training batch, the same for every seed: the batch of step 0 drawn from the root seed "
    "(train.batch_size random windows of block_size + 1 tokens of the train split); "
    "mean next-token cross-entropy, one backward; "
    "grad_norm/block_NN = L2 norm of the gradient over all of block NN's parameters "
    "(weights, biases and LayerNorm gains alike; block_00 is the one nearest the "
    "embedding); grad_norm_weights_rms/block_NN = the L2 norm over block NN's weight "
    "matrices only (every parameter with two or more dimensions), divided by the square "
    "root of their number of entries (the per-entry RMS); each ratio_last_first = last / "
    "first."
)
WEIGHTS_RMS = "grad_norm_weights_rms"  # the prefix of the second definition's keys


def block_gradient_norms(model: LanguageModel, inputs: Tensor, targets: Tensor) -> dict[str, float]:
    """The L2 norm of each block's parameter gradients on one batch, before any step.

    The model's existing gradients are cleared first and left holding this batch's
    gradients afterwards; no parameter changes.

    Args:
        model: the model at initialisation, in the mode training uses (train).
        inputs: (B, T) token ids.
        targets: (B, T) the next token of each input.

    Returns:
        ``grad_norm/block_NN`` for every block (numbered from 00) and
        ``grad_norm/ratio_last_first``; the same under ``grad_norm_weights_rms/`` for the
        weight matrices' per-entry RMS (:data:`GRAD_NORM_PROTOCOL`).

    Raises:
        ValueError: the first block has no parameters with a gradient (no ratio).
    """
    model.zero_grad(set_to_none=True)
    device = next(model.parameters()).device
    logits = model(inputs.to(device))  # (B, T, V)
    loss = F.cross_entropy(logits.flatten(0, 1), targets.to(device).flatten())
    loss.backward()
    every = [_grad_norm(list(block.parameters())) for block in model.blocks]
    matrices = [[p for p in block.parameters() if p.ndim >= 2] for block in model.blocks]
    rms = [_grad_norm(ps) / math.sqrt(sum(p.numel() for p in ps)) for ps in matrices]
    return {**_per_block("grad_norm", every), **_per_block(WEIGHTS_RMS, rms)}


def _per_block(prefix: str, norms: list[float]) -> dict[str, float]:
    """``{prefix}/block_NN`` for every block and ``{prefix}/ratio_last_first``."""
    if norms[0] == 0.0:
        raise ValueError("block 00 has no parameter gradients: the ratio last/first is undefined")
    metrics = {f"{prefix}/block_{i:02d}": norm for i, norm in enumerate(norms)}
    metrics[f"{prefix}/ratio_last_first"] = norms[-1] / norms[0]
    return metrics


def _grad_norm(parameters: list[torch.nn.Parameter]) -> float:
    """The L2 norm of the gradients of ``parameters`` (one without a gradient adds 0)."""
    squares = [p.grad.double().pow(2).sum() for p in parameters if p.grad is not None]
    return float(torch.stack(squares).sum().sqrt()) if squares else 0.0


def parameter_counts(model: LanguageModel) -> dict[str, int]:
    """Parameters per component by counting the built module: ``params/embedding`` etc.

    The components are those of ``count_parameters_by_module`` (embedding, position,
    attention, mlp, norm, head) plus ``params/total``.
    """
    return {f"params/{name}": count for name, count in count_parameters_by_module(model).items()}
