"""The whole-split score of a finished training run: what W&B's run summary holds.

The validation curve (:class:`~attnlab.metrics.ValidationCurve`) scores the whole
validation split at its points; W&B logs them as ``val/ppl_curve``. The number every claim
of docs/catalogue.md uses is P0's ``val/ppl`` of the trained model on that split, and
beside it the bits per byte (``val/bpb``), which does not depend on the vocabulary.
:class:`WholeSplitScore` computes both when training ends, with the evaluate stage's own
function, so a train run's and a sweep trial's summary mean the same thing as
``reports/metrics/<variant>/seed-<seed>/eval.json``.
"""

import logging

import lightning.pytorch as pl
from lightning.pytorch.loggers import WandbLogger
from torch import Tensor

from attnlab.members import MemberCallback
from attnlab.metrics.bpb import bits_per_byte, scored_bytes
from attnlab.metrics.perplexity import perplexity

log = logging.getLogger(__name__)
PPL = "val/ppl"
BPB = "val/bpb"


class WholeSplitScore(MemberCallback):
    """Score the trained model on the whole validation split; put it in the W&B summary.

    Args:
        val_tokens: (N,) the validation split.
        length: The evaluation length (the variant's training context).
        batch_size: Windows per forward pass (speed, not the result).
        token_bytes: (V,) the bytes each token id stands for; None leaves out ``val/bpb``.

    Attributes:
        values: ``{"val/ppl": ..., "val/bpb": ...}`` once training ended, on rank zero.
    """

    def __init__(
        self, val_tokens: Tensor, length: int, batch_size: int, token_bytes: Tensor | None
    ) -> None:
        super().__init__()
        self.val_tokens, self.length, self.batch_size = val_tokens, length, batch_size
        self.token_bytes = token_bytes
        self.values: dict[str, float] = {}

    def on_train_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        """Score the split (rank zero only) and write the numbers into each W&B run."""
        if not trainer.is_global_zero:
            return
        score = perplexity(self.model(pl_module), self.val_tokens, self.length, self.batch_size)
        self.values = {PPL: score.ppl}
        if self.token_bytes is not None:
            self.values[BPB] = bits_per_byte(score, scored_bytes(self.val_tokens, self.token_bytes))
        for logger in self.loggers(trainer):
            if not isinstance(logger, WandbLogger):
                continue
            try:
                logger.experiment.summary.update(self.values)
            except Exception as err:  # W&B must never fail a stage
                log.warning("W&B summary not written (%s: %s)", type(err).__name__, err)
