"""Params of the computed experiments: the probes (E03-E07, E10, E12, E15, E19) and E14's cost.

Every size the probes draw at lives here; the one seed is params.yaml's top-level ``seed``.
"""

from typing import Annotated, Literal

from pydantic import Field, model_validator

from attnlab.config.base import Section

Positive = Annotated[int, Field(gt=0)]


class ShuffleParams(Section):
    """E03: a window of ``tokens`` random vectors of ``width``, permuted ``permutations`` times."""

    tokens: Annotated[int, Field(ge=2)]
    width: Positive
    permutations: Positive


class AveragingParams(Section):
    """E04: the window whose averaging matrix is printed (6 in the story) and its width."""

    tokens: Annotated[int, Field(ge=2, le=32)]
    width: Positive


class AttentionCheckParams(Section):
    """E12 and E19: the batch a standalone multi-head attention layer is checked on."""

    batch: Positive
    tokens: Annotated[int, Field(ge=2)]
    d_model: Positive
    n_head: Positive

    @model_validator(mode="after")
    def _heads_divide_width(self) -> "AttentionCheckParams":
        if self.d_model % self.n_head:
            raise ValueError(f"n_head: d_model={self.d_model} is not divisible by {self.n_head}")
        return self


class Gpt2Params(Section):
    """E15: GPT-2 small's published shape (tied output, q/k/v with biases)."""

    vocab_size: Positive
    d_model: Positive
    n_layer: Positive
    n_head: Positive
    n_ctx: Positive


class ProbesParams(Section):
    """Sizes of every probe of the ``probes`` stage."""

    dims: Annotated[list[Positive], Field(min_length=2)]
    pairs: Annotated[int, Field(ge=2)]
    rows: Annotated[int, Field(ge=2)]
    row_length: Annotated[int, Field(ge=2)]
    frozen_above: Annotated[float, Field(gt=0.0, lt=1.0)]
    example_d: Positive
    shuffle: ShuffleParams
    averaging: AveragingParams
    widths: Annotated[list[Positive], Field(min_length=1)]
    equivariance: AttentionCheckParams
    parity: AttentionCheckParams
    gpt2: Gpt2Params

    @model_validator(mode="after")
    def _dims_are_a_sweep(self) -> "ProbesParams":
        if self.dims != sorted(set(self.dims)):
            raise ValueError(f"dims: must be strictly increasing, got {self.dims}")
        if self.example_d not in self.dims:
            raise ValueError(f"example_d: must be one of dims {self.dims}, got {self.example_d}")
        return self


class CostParams(Section):
    """E14: one attention layer timed as n doubles from ``min_tokens`` to ``max_tokens``.

    The doubling stops before a row whose predicted wall time (the previous row's, times 4:
    the n x n score matrix) exceeds ``time_budget_s``, or whose predicted peak memory
    exceeds ``memory_budget_fraction`` of the device's memory (the GPU's, or the machine's
    RAM); a real out-of-memory becomes a row, never a crash.
    """

    device: Literal["auto", "cpu", "cuda"]
    d_model: Positive
    n_head: Positive
    batch: Positive
    causal: bool
    min_tokens: Positive
    max_tokens: Positive
    warmup: Annotated[int, Field(ge=0)]
    repeats: Positive
    slope_rows: Annotated[int, Field(ge=2)]
    time_budget_s: Annotated[float, Field(gt=0.0)]
    memory_budget_fraction: Annotated[float, Field(gt=0.0, le=1.0)]

    @model_validator(mode="after")
    def _a_doubling_ladder(self) -> "CostParams":
        if self.d_model % self.n_head:
            raise ValueError(f"n_head: d_model={self.d_model} is not divisible by {self.n_head}")
        ratio = self.max_tokens // self.min_tokens
        if self.max_tokens % self.min_tokens or ratio & (ratio - 1):
            raise ValueError(
                f"max_tokens: must be min_tokens ({self.min_tokens}) times a power of two, "
                f"got {self.max_tokens}"
            )
        return self

    @property
    def lengths(self) -> list[int]:
        """The sequence lengths n of the sweep: min_tokens doubling up to max_tokens."""
        lengths = [self.min_tokens]
        while lengths[-1] < self.max_tokens:
            lengths.append(lengths[-1] * 2)
        return lengths
