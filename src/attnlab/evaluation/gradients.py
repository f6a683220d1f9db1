"""Gradient norms per block (E11), and parameters per component.

E11's claim: with post-norm the gradient reaching each block grows with depth, which is why
post-norm needs warmup. The measurement is one training batch, at initialisation (and at
every step kept along training): the loss gradient's L2 norm over each block's parameters,
and the ratio of the last block's to the first's. Which parameters count, and in which
mode the model runs, are choices the story leaves open, so every definition is recorded
beside the main one, each read by one of E11's measurement protocols in the catalogue:
the weight matrices alone (no biases, no LayerNorm gains) as their per-entry RMS
(``weights-rms``), the attention's parameters alone and the MLP's alone (``attention``,
``mlp``), and all parameters in eval mode (``eval-mode``: no dropout).
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
    "root of their number of entries (the per-entry RMS); grad_norm_attention/block_NN "
    "and grad_norm_mlp/block_NN = the L2 norm over the block's attention (its q, k, v "
    "and output projections) or its MLP alone; grad_norm_eval/block_NN = grad_norm/ with "
    "the model in eval mode (no dropout; the same as training mode without dropout); "
    "each ratio_last_first = last / first."
)
MAIN = "grad_norm"
WEIGHTS_RMS = "grad_norm_weights_rms"  # the weight matrices' per-entry RMS
ATTENTION = "grad_norm_attention"  # each block's attention alone
MLP = "grad_norm_mlp"  # each block's MLP alone
EVAL_MODE = "grad_norm_eval"  # every parameter, the model in eval mode


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
        weight matrices' per-entry RMS, and under ``grad_norm_attention/`` and
        ``grad_norm_mlp/`` for each part alone when every block has it
        (:data:`GRAD_NORM_PROTOCOL`).

    Raises:
        ValueError: the first block has no parameters with a gradient (no ratio).
    """
    model.zero_grad(set_to_none=True)
    device = next(model.parameters()).device
    logits = model(inputs.to(device))  # (B, T, V)
    loss = F.cross_entropy(logits.flatten(0, 1), targets.to(device).flatten())
    loss.backward()
    blocks = list(model.blocks)
    every = [_grad_norm(list(block.parameters())) for block in blocks]
    matrices = [[p for p in block.parameters() if p.ndim >= 2] for block in blocks]
    rms = [_grad_norm(ps) / math.sqrt(sum(p.numel() for p in ps)) for ps in matrices]
    norms = {**_per_block(MAIN, every), **_per_block(WEIGHTS_RMS, rms)}
    for prefix, part in ((ATTENTION, "mixer"), (MLP, "mlp")):
        modules = [getattr(block, part) for block in blocks]
        if all(module is not None for module in modules):
            norms |= _per_block(prefix, [_grad_norm(list(m.parameters())) for m in modules])
    return norms


def eval_mode_gradient_norms(
    model: LanguageModel, inputs: Tensor, targets: Tensor
) -> dict[str, float]:
    """:func:`block_gradient_norms` over every parameter with the model in eval mode.

    Returns:
        ``grad_norm_eval/block_NN`` and ``grad_norm_eval/ratio_last_first``. The model is
        left in the mode it came in.
    """
    was_training = model.training
    try:
        norms = block_gradient_norms(model.eval(), inputs, targets)
    finally:
        model.train(was_training)
    return {
        EVAL_MODE + key.removeprefix(MAIN): v
        for key, v in norms.items()
        if key.startswith(MAIN + "/")
    }


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
