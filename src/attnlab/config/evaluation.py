"""Params of the evaluate stage and of the validation curve drawn during training.

Which extra measurements a variant gets is data: ``measurements`` maps an experiment (the
first word of a variant's name, ``positions`` of ``positions-rope``) to the measurements
of :mod:`attnlab.evaluation.report` that experiment needs. Every variant also gets
``val/ppl``, ``train/ppl`` and its parameters per component. A run that rows of other
experiments read (their ``aliases``) gets their measurements too.
"""

from typing import Annotated, Literal

from pydantic import Field

from attnlab.config.base import Section
from attnlab.config.variants import BudgetParams

Measurement = Literal["extrapolation", "score_stats", "grad_norms"]
PositiveInt = Annotated[int, Field(gt=0)]


class CurveParams(Section):
    """The ``val/ppl`` curve during training (read by the train stage).

    ``every_steps`` is at the story's budget and scales with it like every step count, so
    a run has about ``steps / every_steps`` points at any ``budget.scale``.
    """

    every_steps: PositiveInt
    windows: PositiveInt

    def every(self, budget: BudgetParams) -> int:
        """Steps between two points at this budget, never fewer than one."""
        return budget.steps(self.every_steps)


class EvaluateParams(Section):
    """How trained variants are measured (P0's perplexity, E09, E11, E13).

    ``device`` auto means CUDA when torch sees a GPU, else the CPU; the numbers agree
    across devices up to float rounding. ``batch_size`` (windows per forward pass) changes
    speed and memory only. ``lengths`` are E13's evaluation lengths and ``stats_windows``
    the size of E09's fixed batch of validation windows.
    """

    device: Literal["auto", "cpu", "cuda"]
    batch_size: PositiveInt
    measurements: dict[str, list[Measurement]]
    lengths: Annotated[list[PositiveInt], Field(min_length=1)]
    stats_windows: PositiveInt
    curve: CurveParams

    def measurements_for(self, *experiments: str) -> tuple[str, ...]:
        """The extra measurements of ``experiments``, each once (none for one not listed)."""
        found = (m for experiment in experiments for m in self.measurements.get(experiment, ()))
        return tuple(dict.fromkeys(found))
