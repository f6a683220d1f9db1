"""Params of the evaluate stage and of the validation curve drawn during training.

Which extra measurements a variant gets is not a knob: the experiment catalogue
(:mod:`attnlab.catalogue`, ``measure`` of each experiment) lists them for the rows of each
experiment. Every variant also gets ``val/ppl``, ``train/ppl`` and its parameters per
component. A run that rows of other experiments read (their ``aliases``) gets their
measurements too.
"""

from typing import Annotated, Literal

from pydantic import Field

from attnlab.config.base import Section
from attnlab.config.variants import BudgetParams

PositiveInt = Annotated[int, Field(gt=0)]


class CurveParams(Section):
    """The ``val/ppl`` curve during training (read by the train stage).

    Each point scores the whole validation split. ``every_steps`` is at the story's budget
    and scales with it like every step count, so a run has about ``steps / every_steps``
    points, down to ``min_every_steps``: at a quick run's budget a point every step would
    cost more than the training.
    """

    every_steps: PositiveInt
    min_every_steps: PositiveInt

    def every(self, budget: BudgetParams) -> int:
        """Steps between two points at this budget, never fewer than ``min_every_steps``."""
        return max(budget.steps(self.every_steps), self.min_every_steps)


class EvaluateParams(Section):
    """How trained variants are measured (P0's perplexity, E09, E11, E13).

    ``device`` auto means CUDA when torch sees a GPU, else the CPU; the numbers agree
    across devices up to float rounding. ``batch_size`` (windows per forward pass) changes
    speed and memory only. ``lengths`` are E13's evaluation lengths and ``stats_windows``
    the size of E09's fixed batch of validation windows.
    """

    device: Literal["auto", "cpu", "cuda"]
    batch_size: PositiveInt
    lengths: Annotated[list[PositiveInt], Field(min_length=1)]
    stats_windows: PositiveInt
    curve: CurveParams
