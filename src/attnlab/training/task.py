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

A seed group (several seeds of one variant, :func:`~attnlab.training.fit.train_group`) is
one task with one model per seed, its ``members``. Each step runs every member on its own
batch, one after the other, with the very kernels its single run would run: the summed
loss's gradient with respect to a member's weights is that member's gradient alone, and
AdamW updates each weight from its own gradient, so a member trains bit for bit as its
single run does. Dropout too: each member draws its masks from its own copy of the
generator state, the state its single run would have (:class:`MemberRandomness`).
Stacking the members' weights into one batched model (``torch.func.vmap``) was measured
and rejected: on the CPU it ran 0.47-0.8x as fast as the members one after the other
(attention has no batching rule), and it computes other sums than the single run.
"""

from collections.abc import Callable, Sequence
from typing import Any

import lightning.pytorch as pl
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attnlab.data.batches import StepBatch
from attnlab.members import member_metric
from attnlab.metrics.perplexity import Perplexity, batch_nll
from attnlab.metrics.validation_curve import PPL
from attnlab.models import LanguageModel
from attnlab.training.kernels import compiled_step

_MEMBER_RNG = "attnlab_member_rng"


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


class MemberRandomness:
    """Each member's own random stream: the one its single run's dropout draws from.

    A single run seeds the global generator with its init seed, builds its model, and its
    dropout then draws from what follows. A member's state is captured at that same point
    (:meth:`capture`, right after its model is built) and swapped in around its forward
    pass, so its masks are its single run's. A member without dropout draws nothing, and
    a group of one keeps the global stream (:class:`~attnlab.training.checkpoints.RngState`
    carries it).
    """

    def __init__(self) -> None:
        self.states: list[dict[str, Tensor]] = []

    def capture(self) -> None:
        """Keep the global state (CPU, and the current GPU's) as the next member's."""
        state = {"cpu": torch.get_rng_state()}
        if torch.cuda.is_available():
            state["cuda"] = torch.cuda.get_rng_state()
        self.states.append(state)

    def swap(self, member: int) -> dict[str, Tensor]:
        """Make member ``member``'s state the global one; return the state it replaced."""
        previous = {"cpu": torch.get_rng_state()}
        torch.set_rng_state(self.states[member]["cpu"])
        if "cuda" in self.states[member] and torch.cuda.is_available():
            previous["cuda"] = torch.cuda.get_rng_state()
            torch.cuda.set_rng_state(self.states[member]["cuda"])
        return previous

    def swap_back(self, member: int, previous: dict[str, Tensor]) -> None:
        """Keep where member ``member``'s stream has got to, and restore ``previous``."""
        self.states[member] = {"cpu": torch.get_rng_state()}
        torch.set_rng_state(previous["cpu"])
        if "cuda" in previous:
            self.states[member]["cuda"] = torch.cuda.get_rng_state()
            torch.cuda.set_rng_state(previous["cuda"])


class LanguageModelTask(pl.LightningModule):
    """Train built :class:`LanguageModel` s on :class:`StepBatch` es: one, or a seed group.

    Args:
        members: The models to train, already initialised (PyTorch defaults, P0): one for
            a single run, one per seed for a group, whose batches then stack the members'
            batches (``x`` is (M, B, T)).
        lr: The peak learning rate.
        betas: AdamW's betas.
        weight_decay: AdamW's decoupled weight decay, applied to every parameter as
            PyTorch's AdamW does by default (P0's choice: no parameter groups).
        warmup_steps: Steps of linear warmup (already scaled by the budget).
    """

    def __init__(
        self,
        members: Sequence[LanguageModel],
        lr: float,
        betas: tuple[float, float],
        weight_decay: float,
        warmup_steps: int,
        randomness: MemberRandomness | None = None,
    ) -> None:
        super().__init__()
        self.members = nn.ModuleList(members)
        self.grouped = len(self.members) > 1
        # Only a group with dropout draws from per-member streams; see MemberRandomness.
        dropout = self.grouped and members[0].config.dropout > 0
        if dropout and (randomness is None or len(randomness.states) != len(members)):
            raise ValueError("a seed group with dropout needs each member's random state")
        self.randomness = randomness if dropout else None
        self.lr = lr
        self.betas = betas
        self.weight_decay = weight_decay
        self.warmup_steps = warmup_steps
        self.step_loss = next_token_loss  # or compiled (use_compiled_step)
        self._val_nll, self._val_tokens = [0.0] * len(self.members), 0

    @property
    def model(self) -> LanguageModel:
        """The model of a single run (a group has one per member: ``members``)."""
        if self.grouped:
            raise AttributeError("a seed group has one model per member: use members")
        return self.members[0]

    def forward(self, idx: Tensor) -> Tensor:
        """Logits (B, T, V) of a single run's model for token ids ``idx`` (B, T)."""
        return self.model(idx)

    def training_step(self, batch: StepBatch, batch_idx: int) -> Tensor | dict[str, Tensor]:
        """One optimiser step's loss (a group's: the sum, and each member's in ``losses``).

        Refuses a batch drawn for another step.
        """
        # The batch carries its step as a Python int: this check costs no host sync, and
        # it is what makes "a resumed run sees the batches an uninterrupted one sees" a
        # guarantee instead of a hope.
        if batch.step != self.global_step:
            raise RuntimeError(f"batch of step {batch.step} arrived at step {self.global_step}")
        if not self.grouped:
            return self.step_loss(self.members[0], batch.x, batch.y)
        losses = torch.stack([self._member_loss(i, batch) for i in range(len(self.members))])
        return {"loss": losses.sum(), "losses": losses.detach()}

    def _member_loss(self, member: int, batch: StepBatch) -> Tensor:
        """Member ``member``'s loss on its own rows of the group's batch, its own dropout."""
        model, x, y = self.members[member], batch.x[member], batch.y[member]
        if self.randomness is None:
            return self.step_loss(model, x, y)
        previous = self.randomness.swap(member)
        try:
            return self.step_loss(model, x, y)
        finally:
            self.randomness.swap_back(member, previous)

    def use_compiled_step(self) -> None:
        """Run the step's forward and backward through ``torch.compile``'s kernels."""
        self.step_loss = compiled_step(next_token_loss)

    def on_validation_epoch_start(self) -> None:
        """Start a new sum: each validation is one point of the curve."""
        self._val_nll, self._val_tokens = [0.0] * len(self.members), 0

    def validation_step(self, batch: Tensor, batch_idx: int) -> None:
        """Add each member's summed NLL of a batch of windows (B, T + 1) to its sum."""
        # Full precision whatever the training's: the curve is scored as the evaluate
        # stage scores, and as it was before it moved into Lightning's loop.
        with torch.autocast(self.device.type, enabled=False):
            for i, model in enumerate(self.members):
                self._val_nll[i] += batch_nll(model, batch)
        self._val_tokens += batch[:, 1:].numel()

    def on_validation_epoch_end(self) -> None:
        """Log each member's ``val/ppl``, in float64 so readers get the exact value."""
        # logger=False: ValidationCurve logs the point (also at step 0, which Lightning's
        # sanity check does not log) and replays it into a resumed run's new W&B run.
        for i, total in enumerate(self._val_nll):
            ppl = Perplexity.of_sum(total, self._val_tokens).ppl
            value = torch.tensor(ppl, dtype=torch.float64, device=self.device)
            key = member_metric(PPL, i if self.grouped else None)
            self.log(key, value, logger=False, batch_size=1)

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        """Keep each member's random stream (a group with dropout) in the checkpoint."""
        if self.randomness is not None:
            checkpoint[_MEMBER_RNG] = self.randomness.states

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        """Continue each member's random stream where the checkpoint left it."""
        if self.randomness is not None:
            self.randomness.states = checkpoint[_MEMBER_RNG]

    def configure_optimizers(self) -> dict:
        """AdamW over every member's weights, and a per-step LambdaLR for the warmup.

        AdamW is element-wise: one optimiser over a group's weights updates each member
        as its own would. On a GPU it is the fused kernel (one launch for all weights).
        """
        optimizer = torch.optim.AdamW(
            self.members.parameters(),
            lr=self.lr,
            betas=self.betas,
            weight_decay=self.weight_decay,
            fused=self.device.type == "cuda" or None,
        )
        schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, warmup_factor(self.warmup_steps))
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": schedule, "interval": "step"}}
