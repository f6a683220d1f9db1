"""The one LightningModule that trains every variant of docs/catalogue.md (P0, E02-E18).

The model comes in built (a pure-torch :class:`~attnlab.models.LanguageModel`); this module
adds only what training needs: the next-token loss, AdamW with the variant's settings and
P0's schedule, linear warmup then a constant learning rate (the catalogue's choice: no
decay; E11 uses the warmup to tame post-norm).

No training step calls ``self.log``: logging a tensor every step costs a host sync
(PERFORMANCE.md). The loss leaves the step as the step's output, and
:class:`~attnlab.training.loss_curve.LossCurve` moves it to the host in batches.

Validation is the ``val/ppl`` curve's: Lightning's loop feeds the curve's fixed windows
(``TokenWindows.val_dataloader``), each step adds a batch's summed NLL, and the epoch's end
logs ``val/ppl`` (into ``callback_metrics``, for
:class:`~attnlab.metrics.ValidationCurve` and the sweeps' pruner), computed exactly as
:func:`~attnlab.metrics.score_windows` computes it.
"""

from collections.abc import Callable

import lightning.pytorch as pl
import torch
import torch.nn.functional as F
from torch import Tensor

from attnlab.data.batches import StepBatch
from attnlab.metrics.perplexity import Perplexity, batch_nll
from attnlab.metrics.validation_curve import PPL
from attnlab.models import LanguageModel
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
        self._val_nll, self._val_tokens = 0.0, 0

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

    def on_validation_epoch_start(self) -> None:
        """Start a new sum: each validation is one point of the curve."""
        self._val_nll, self._val_tokens = 0.0, 0

    def validation_step(self, batch: Tensor, batch_idx: int) -> None:
        """Add the summed NLL of a batch of windows (B, T + 1) to this validation's sum."""
        # Full precision whatever the training's: the curve is scored as the evaluate
        # stage scores, and as it was before it moved into Lightning's loop.
        with torch.autocast(self.device.type, enabled=False):
            self._val_nll += batch_nll(self.model, batch)
        self._val_tokens += batch[:, 1:].numel()

    def on_validation_epoch_end(self) -> None:
        """Log ``val/ppl`` of the windows, in float64 so readers get the exact value."""
        ppl = Perplexity.of_sum(self._val_nll, self._val_tokens).ppl
        # logger=False: ValidationCurve logs the point (also at step 0, which Lightning's
        # sanity check does not log) and replays it into a resumed run's new W&B run.
        value = torch.tensor(ppl, dtype=torch.float64, device=self.device)
        self.log(PPL, value, logger=False, batch_size=1)

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
