"""The thresholds a study's answer is decided by, read where the story fixes them.

Both come from E11 (docs/catalogue.md, the Sweeps): "near the best" and "rescued" use the
catalogue's one margin for "about the same perplexity", E11.2's "matches" (:func:`matches`,
read from the catalogue on first use), and "rescued" asks of a post-norm trial E11's
warmup (:func:`rescue_warmup`, read from its rows' params). Neither was tuned to a study's
result: both were fixed before any full-length study ran.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from attnlab.catalogue import experiment

MARGIN_CLAIM = ("E11", "E11.2")  # the experiment and claim whose "matches" is the margin
RESCUE_EXPERIMENT = "E11"  # the experiment whose warmup rescues post-norm


@cache
def matches() -> float:
    """The largest ratio of two val/ppl that E11.2 still calls "matches" (its threshold's hi)."""
    key, claim = MARGIN_CLAIM
    hi = next(spec for spec in experiment(key).claims if spec.id == claim).threshold.hi
    if hi is None:
        raise ValueError(f"{claim} has no upper bound: no margin for 'matches'")
    return hi


def rescue_warmup(recipes: Mapping[str, Mapping[str, Any]]) -> int | None:
    """The warmup steps E11's rows train with (the most of any row).

    ``recipes``: by variant, its resolved ``train`` recipe beside its ``model`` (params
    ``variants``). ``None`` when none of E11's rows is among them.
    """
    warmups = [
        int(recipes[row.variant]["train"]["warmup_steps"])
        for row in experiment(RESCUE_EXPERIMENT).rows
        if row.variant in recipes
    ]
    return max(warmups) if warmups else None
