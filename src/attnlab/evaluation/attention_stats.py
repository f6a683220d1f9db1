"""What each head's softmax is doing: score spread, entropy, one-hot rows (E08, E09).

E09 asks, on a fixed batch of validation windows, at initialisation and after training,
whether a head without the division by sqrt(d_k) runs away: its scores spread by orders of
magnitude, its rows collapse onto one key (entropy -> 0, largest weight > 0.99). The
statistics come from ``LanguageModel.attention_maps``, the explicit masked-softmax path.
"""

from __future__ import annotations

import torch
from torch import Tensor

from attnlab.metrics.perplexity import evaluating
from attnlab.models import AttentionRecord, LanguageModel

ONEHOT_THRESHOLD = 0.99  # a row counts as one-hot when its largest weight exceeds this

SCORE_STATS_PROTOCOL = (
    "on a fixed batch of validation windows (a choice of the P0 windows drawn from the root "
    "seed, the same for every run), per block "
    "(block_00 is the first) and head: scores/std = standard deviation (population) of the "
    "scores the softmax sees (after any division by sqrt(d_k) and any ALiBi bias) over the "
    "causal entries only (key <= query); attn/entropy = mean over all query rows of "
    "-sum w ln w, nats; attn/onehot_frac = share of query rows whose largest weight exceeds "
    f"{ONEHOT_THRESHOLD}. All T rows count, the first included: it has a single key, so it "
    "is one-hot with zero entropy by construction (a floor of 1/T on onehot_frac). "
    "init/ is the model rebuilt from the run's init seed before any step, trained/ the "
    "trained one."
)


def head_statistics(record: AttentionRecord) -> dict[str, Tensor]:
    """The three E09 statistics of one block's heads.

    Args:
        record: scores and weights, each (B, H, T, T), from ``attention_maps``.

    Returns:
        ``scores/std``, ``attn/entropy`` and ``attn/onehot_frac``, each (H,) float64.
    """
    scores, weights = record.scores.double(), record.weights.double()
    B, H, T, _ = scores.shape
    causal = torch.ones(T, T, dtype=torch.bool, device=scores.device).tril()  # (T, T)
    # The entries above the diagonal are computed but masked: they are not the head's scores.
    kept = scores.transpose(0, 1)[:, :, causal].reshape(H, -1)  # (H, B * T(T+1)/2)
    # 0 * ln 0 is 0: xlogy gives it exactly, where w * w.log() would give NaN.
    entropy = -torch.special.xlogy(weights, weights).sum(-1)  # (B, H, T)
    onehot = weights.amax(-1) > ONEHOT_THRESHOLD  # (B, H, T)
    return {
        "scores/std": kept.std(dim=1, correction=0),
        "attn/entropy": entropy.mean(dim=(0, 2)),
        "attn/onehot_frac": onehot.double().mean(dim=(0, 2)),
    }


def attention_statistics(
    model: LanguageModel, inputs: Tensor, prefix: str = ""
) -> dict[str, float]:
    """E09's statistics for every block and head of ``model`` on one batch.

    Args:
        model: the language model (its mode is restored afterwards).
        inputs: (B, T) token ids, the fixed batch.
        prefix: put before every key, e.g. ``"init/"``.

    Returns:
        ``{prefix}{stat}/block_NN/head_MM`` for each statistic, block and head, numbered
        from 00. A model without a mixer has no attention and returns an empty dict.
    """
    with evaluating(model):
        records = model.attention_maps(inputs.to(next(model.parameters()).device))
    metrics: dict[str, float] = {}
    for b, record in enumerate(records):
        for stat, per_head in head_statistics(record).items():
            for h, value in enumerate(per_head.tolist()):
                metrics[f"{prefix}{stat}/block_{b:02d}/head_{h:02d}"] = value
    return metrics
