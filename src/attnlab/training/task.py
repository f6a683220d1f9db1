"""The one LightningModule that trains every variant of docs/catalogue.md (P0, E02-E18).

The model comes in built (a pure-torch :class:`~attnlab.models.LanguageModel`); this module
adds only what training needs: the next-token loss, AdamW with the variant's settings and
P0's schedule, linear warmup then a constant learning rate (the catalogue's choice: no
decay; E11 uses the warmup to tame post-norm).

Nothing here calls ``self.log``: logging a tensor every step costs a host sync
(PERFORMANCE.md). The loss leaves the step as the step's output, and
:class:`~attnlab.training.curve.LossCurve` moves it to the host in batches.
"""

from collections.abc import Callable

import lightning.pytorch as pl
import torch
import torch.nn.functional as F
from torch import Tensor

from attnlab.models import LanguageModel
from attnlab.training.data import StepBatch
from attnlab.training.kernels import compiled_step


def next_token_loss(model: LanguageModel, x: Tensor, y: Tensor) -> Tensor:
    """Mean cross-entropy of predicting ``y`` (B, T) from ``x`` (B, T), in nats per token."""
    logits = model(x)  # (B, T, V)
    return F.cross_entropy(logits.flatten(0, 1), y.flatten())  # (B*T, V) vs (B*T,)


def warmup_factor(warmup_steps: int) -> Callable[[int], float]:
    """The lr multiplier of step ``s``: ``(s + 1) / (warmup_steps + 1)``, then 1.

    The ``+ 1`` keeps the first step's lr above zero (a zero-lr step would be wasted) and
    reaches the full lr exactly at step ``warmup_steps``; ``warmup_steps = 0`` is constant.
    """

    def factor(step: int) -> float:
        return min(1.0, (step + 1) / (warmup_steps + 1))

    return factor


class LanguageModelTask(pl.LightningModule):
    """Train a built :class:`LanguageModel` on :class:`StepBatch` es.

    Args:
        model: The model to train, already initialised (PyTorch defaults, P0).
        lr: The peak learning rate.
        betas: AdamW's betas.
        weight_decay: AdamW's decoupled weight decay, applied to every parameter as
            PyTorch's AdamW does by default (P0's choice: no parameter groups).
        warmup_steps: Steps of linear warmup (already scaled by the budget).
    """

    def __init__(
        self,
        model: LanguageModel,
        lr: float,
        betas: tuple[float, float],
        weight_decay: float,
        warmup_steps: int,
    ) -> None:
        super().__init__()
        self.model = model
        self.lr = lr
        self.betas = betas
        self.weight_decay = weight_decay
        self.warmup_steps = warmup_steps
        self.step_loss = next_token_loss  # or compiled (use_compiled_step)

    def forward(self, idx: Tensor) -> Tensor:
        """Logits (B, T, V) for token ids ``idx`` (B, T)."""
        return self.model(idx)

    def training_step(self, batch: StepBatch, batch_idx: int) -> Tensor:
        """One optimiser step's loss; refuses a batch drawn for another step."""
        # The batch carries its step as a Python int: this check costs no host sync, and
        # it is what makes "a resumed run sees the batches an uninterrupted one sees" a
        # guarantee instead of a hope.
        if batch.step != self.global_step:
            raise RuntimeError(f"batch of step {batch.step} arrived at step {self.global_step}")
        return self.step_loss(self.model, batch.x, batch.y)

    def use_compiled_step(self) -> None:
        """Run the step's forward and backward through ``torch.compile``'s kernels."""
        self.step_loss = compiled_step(next_token_loss)

    def configure_optimizers(self) -> dict:
        """AdamW and a per-step LambdaLR for the warmup."""
        optimizer = torch.optim.AdamW(
            self.model.parameters(),
            lr=self.lr,
            betas=self.betas,
            weight_decay=self.weight_decay,
        )
        schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, warmup_factor(self.warmup_steps))
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": schedule, "interval": "step"}}
