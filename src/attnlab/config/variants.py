"""Trained variants as data: model and training defaults plus per-variant overrides.

Every trained row of the catalogue (E02, E08, E11, E13, E18; :mod:`attnlab.catalogue`)
is an entry of ``variants`` in params.yaml, kebab-case; it overrides the P0 defaults of
``model`` and ``train``. :func:`resolve_variant` turns one entry into the objects training
needs, and the loader resolves every entry up front, so a bad override fails before any
stage does work. A row that is the same run as another experiment's (P0's block is E02's
last row, E08's d_k = 32 divided row and E18's one block) is an entry of ``aliases``
instead, naming the variant whose runs it reads: it trains nothing of its own
(:func:`check_aliases`).
"""

import dataclasses
import re
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field, ValidationError, model_validator

from attnlab.architecture import ModelConfig
from attnlab.config.base import Section
from attnlab.errors import ParamsError

_VARIANT_NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)+")


class BudgetParams(Section):
    """One knob that scales every step count: 1.0 is the story's budget."""

    scale: Annotated[float, Field(gt=0.0, le=100.0)]

    def steps(self, steps: int) -> int:
        """``steps`` scaled by the budget, never fewer than one."""
        return max(1, round(steps * self.scale))

    def schedule(self, train: "TrainParams") -> tuple[int, int]:
        """The steps and warmup steps ``train`` runs for at this budget.

        Both scale with the budget, so a warmup stays the same share of the run; it never
        outlasts the run, and no warmup stays none.
        """
        steps = self.steps(train.steps)
        warmup = min(steps, self.steps(train.warmup_steps)) if train.warmup_steps else 0
        return steps, warmup


# NumPy's and Lightning's seeding accept 32 bits; a larger seed would fail mid-stage.
Seed = Annotated[int, Field(ge=0, le=2**32 - 1)]


class TrainParams(Section):
    """How one variant is optimised (P0: AdamW at 1e-3, 3000 steps of 64 windows).

    ``init_seed`` and ``data_seed`` pin one of the two things a run's seed controls
    (docs/catalogue.md, P0, Seeds): the initial weights and dropout, or which windows each
    step trains on. None, the default in params.yaml, means the run's seed, so the runs of
    a variant differ in both; pinning one varies only the other across the seeds.
    """

    steps: Annotated[int, Field(gt=0)]
    batch_size: Annotated[int, Field(gt=0)]
    lr: Annotated[float, Field(gt=0.0)]
    warmup_steps: Annotated[int, Field(ge=0)]
    weight_decay: Annotated[float, Field(ge=0.0)]
    betas: Annotated[
        list[Annotated[float, Field(ge=0.0, lt=1.0)]], Field(min_length=2, max_length=2)
    ]
    init_seed: Seed | None
    data_seed: Seed | None

    @model_validator(mode="after")
    def _warmup_fits(self) -> "TrainParams":
        if self.warmup_steps > self.steps:
            raise ValueError(
                f"warmup_steps ({self.warmup_steps}) must not exceed steps ({self.steps})"
            )
        return self


class VariantOverrides(Section):
    """What one variant changes relative to the ``model`` and ``train`` defaults."""

    model: dict[str, Any] = {}
    train: dict[str, Any] = {}


@dataclass(frozen=True)
class Variant:
    """A trained variant, fully resolved: its name, experiment, model and training recipe."""

    name: str
    model: ModelConfig
    train: TrainParams

    @property
    def experiment(self) -> str:
        """A label for the run's W&B tags and recorded config: the name's first word.

        It decides nothing: which experiments a variant is a row of, and so what is
        measured on it, is the catalogue's (:mod:`attnlab.catalogue`). The label stays as
        it was because the recorded config, and so every run's fingerprint, holds it.
        """
        return self.name.split("-", 1)[0]


def check_variant_name(name: str, section: str = "variants") -> str:
    """Variant names are kebab-case ``<experiment>-<row>``: they key stages and paths.

    ``section`` is where the name is a key (``variants``, or ``aliases`` for an alias).
    """
    if not _VARIANT_NAME.fullmatch(name):
        raise ValueError(f"{section}.{name}: expected a kebab-case <experiment>-<row> name")
    return name


def check_aliases(aliases: dict[str, str], variants: dict[str, VariantOverrides]) -> None:
    """Every alias names a trained variant, is not one itself, and is no link of a chain.

    An alias is a row that is the same run as a variant: it has no knobs of its own, no
    stages, and reads that variant's models and metrics. Each name has one meaning, so an
    alias that is also a key of ``variants`` is refused, and so is an alias of an alias
    (its rows would read a run nobody trains under that name).

    Raises:
        ValueError: naming ``aliases.<name>`` and what to write instead.
    """
    for alias, shared in aliases.items():
        check_variant_name(alias, "aliases")
        if alias in variants:
            raise ValueError(
                f"aliases.{alias}: also a key of variants; an alias has no knobs of its own "
                f"(it reads {shared}'s runs): remove one of the two"
            )
        if shared in aliases:
            raise ValueError(
                f"aliases.{alias}: {shared!r} is itself an alias (of {aliases[shared]}); "
                f"name the trained variant: {aliases[shared]}"
            )
        if shared not in variants:
            known = ", ".join(sorted(variants))
            raise ValueError(f"aliases.{alias}: no variant {shared!r} to share; known: {known}")


def build_model_config(values: dict[str, Any], key: str) -> ModelConfig:
    """Build a :class:`ModelConfig` from plain values, naming ``key`` in any error.

    Raises:
        ParamsError: an unknown field, or a value or combination ModelConfig rejects.
    """
    known = {field.name for field in dataclasses.fields(ModelConfig)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ParamsError(f"{key}.{unknown[0]}: unknown key (not a field of the model config)")
    try:
        return ModelConfig(**values)
    except ValueError as err:
        # ModelConfig's messages start with the field name: "n_head: d_model=...".
        raise ParamsError(f"{key}.{err}") from None


def resolve_variant(
    name: str,
    overrides: VariantOverrides,
    model_defaults: dict[str, Any],
    train_defaults: TrainParams,
    vocab_size: int,
) -> Variant:
    """Merge one variant's overrides onto the defaults and validate the result.

    Args:
        name: the variant's key in ``variants``.
        overrides: its ``model`` and ``train`` overrides.
        model_defaults: the ``model`` section (every ModelConfig field but vocab_size).
        train_defaults: the validated ``train`` section.
        vocab_size: the tokenizer's vocabulary (``bpe.vocab_size``), never stored twice.

    Raises:
        ParamsError: naming ``variants.<name>.model.<field>`` or ``...train.<field>``.
    """
    key = f"variants.{name}"
    model = build_model_config(
        {**model_defaults, **overrides.model, "vocab_size": vocab_size}, f"{key}.model"
    )
    try:
        train = TrainParams.model_validate({**train_defaults.model_dump(), **overrides.train})
    except ValidationError as err:
        first = err.errors(include_url=False)[0]
        field = ".".join(str(part) for part in first["loc"])
        where = f"{key}.train.{field}" if field else f"{key}.train"
        raise ParamsError(f"{where}: {first['msg'].removeprefix('Value error, ')}") from None
    return Variant(name=name, model=model, train=train)
