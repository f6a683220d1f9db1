"""Gradient norms per block at initialisation (E11), and parameters per component.

E11's claim: with post-norm the gradient reaching each block grows with depth, which is why
post-norm needs warmup. The measurement is one training batch, before any step: the loss
gradient's L2 norm over each block's parameters, and the ratio of the last block's to the
first's.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from attnlab.models import LanguageModel, count_parameters_by_module

GRAD_NORM_PROTOCOL = (
    "the model rebuilt from the run's init seed, before any step, in training mode; one "
    "training batch, the same for every seed: the batch of step 0 drawn from the root seed "
    "(train.batch_size random windows of block_size + 1 tokens of the train split); "
    "mean next-token cross-entropy, one backward; "
    "grad_norm/block_NN = L2 norm of the gradient over all of block NN's parameters "
    "(block_00 is the one nearest the embedding); ratio_last_first = last / first."
)


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
        ``grad_norm/ratio_last_first``.

    Raises:
        ValueError: the first block has no parameters with a gradient (no ratio).
    """
    model.zero_grad(set_to_none=True)
    device = next(model.parameters()).device
    logits = model(inputs.to(device))  # (B, T, V)
    loss = F.cross_entropy(logits.flatten(0, 1), targets.to(device).flatten())
    loss.backward()
    norms = [_grad_norm(block.parameters()) for block in model.blocks]
    metrics = {f"grad_norm/block_{i:02d}": norm for i, norm in enumerate(norms)}
    if norms[0] == 0.0:
        raise ValueError("block 00 has no parameter gradients: the ratio last/first is undefined")
    metrics["grad_norm/ratio_last_first"] = norms[-1] / norms[0]
    return metrics


def _grad_norm(parameters) -> float:
    squares = [p.grad.double().pow(2).sum() for p in parameters if p.grad is not None]
    return float(torch.stack(squares).sum().sqrt()) if squares else 0.0


def parameter_counts(model: LanguageModel) -> dict[str, int]:
    """Parameters per component by counting the built module: ``params/embedding`` etc.

    The components are those of ``count_parameters_by_module`` (embedding, position,
    attention, mlp, norm, head) plus ``params/total``.
    """
    return {f"params/{name}": count for name, count in count_parameters_by_module(model).items()}
