"""Params of the Optuna sweeps (the Sweeps section of docs/catalogue.md): search spaces as data.

One entry of ``sweeps.studies`` is one study: the variant its trials start from, the axes
it searches (``space``, keyed by the model or train field each axis sets: the YAML key,
the config field and the Optuna parameter are the same word), how many trials, at which
reduced budget, with which seeded sampler and pruner, and the reference trials it runs
first (``references``: the story's own choices, fixed points of the space, so that the
report can answer the story's question from a trial that was certainly run). Every point
of a space must build a valid model and recipe; :func:`check_study` proves it before the
first trial by resolving every point (both ends of a range too wide to list), checks every
reference against the space, and names the offending key.
"""

import dataclasses
import itertools
import re
from typing import Annotated, Any, Literal

from pydantic import Field, ModelWrapValidatorHandler, ValidationError, model_validator
from pydantic_core import InitErrorDetails

from attnlab.architecture import ModelConfig
from attnlab.config.base import Section
from attnlab.config.variants import TrainParams, Variant, VariantOverrides, resolve_variant
from attnlab.errors import ParamsError

_STUDY_NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
# An int axis with at most this many values is checked at every value, a wider one at its
# two ends; together with the other axes' values this bounds the check to ~1e5 variants.
_LISTED_VALUES = 4096
_CHECKED_POINTS = 100_000

PositiveInt = Annotated[int, Field(gt=0)]
Choice = bool | int | float | str | None


class IntAxis(Section):
    """Integers from ``low`` to ``high`` inclusive, every ``step``-th, optionally log-spaced."""

    type: Literal["int"]
    low: int
    high: int
    step: PositiveInt
    log: bool

    @model_validator(mode="after")
    def _a_real_range(self) -> "IntAxis":
        if self.low >= self.high:
            raise ValueError(f"empty range: low ({self.low}) must be below high ({self.high})")
        if (self.high - self.low) % self.step:
            raise ValueError(f"high - low ({self.high - self.low}) is not a multiple of step")
        if self.log and (self.low < 1 or self.step != 1):
            raise ValueError("a log range needs low >= 1 and step 1 (Optuna's rule)")
        return self

    def values(self) -> list[int]:
        """The values a trial can take, or just the two ends of a very wide range."""
        count = (self.high - self.low) // self.step + 1
        if count > _LISTED_VALUES:
            return [self.low, self.high]
        return list(range(self.low, self.high + 1, self.step))

    def contains(self, value: Choice) -> bool:
        """Whether a trial can take ``value`` (an int on the range's grid)."""
        if not isinstance(value, int) or isinstance(value, bool):
            return False
        return self.low <= value <= self.high and (value - self.low) % self.step == 0


class FloatAxis(Section):
    """Real numbers from ``low`` to ``high``, optionally log-spaced."""

    type: Literal["float"]
    low: float
    high: float
    log: bool

    @model_validator(mode="after")
    def _a_real_range(self) -> "FloatAxis":
        if self.low >= self.high:
            raise ValueError(f"empty range: low ({self.low}) must be below high ({self.high})")
        if self.log and self.low <= 0:
            raise ValueError("a log range needs low > 0")
        return self

    def values(self) -> list[float]:
        """The two ends: a model that builds at both builds in between for every field."""
        return [self.low, self.high]

    def contains(self, value: Choice) -> bool:
        """Whether a trial can take ``value`` (a number inside the range)."""
        if not isinstance(value, int | float) or isinstance(value, bool):
            return False
        return self.low <= value <= self.high


class CategoricalAxis(Section):
    """One of a list of values (the order matters to nobody but the reader)."""

    type: Literal["categorical"]
    choices: list[Choice]

    @model_validator(mode="after")
    def _real_choices(self) -> "CategoricalAxis":
        if len(self.choices) < 2:
            raise ValueError("needs at least two choices (a constant belongs in the variant)")
        if len({repr(choice) for choice in self.choices}) != len(self.choices):
            raise ValueError(f"choices repeat a value: {self.choices}")
        return self

    def values(self) -> list[Choice]:
        """Every choice."""
        return list(self.choices)

    def contains(self, value: Choice) -> bool:
        """Whether ``value`` is one of the choices, of the same type (``1`` is not ``true``)."""
        return any(type(value) is type(choice) and value == choice for choice in self.choices)


Axis = Annotated[IntAxis | FloatAxis | CategoricalAxis, Field(discriminator="type")]
_AXIS_TAGS = ("int", "float", "categorical")


class SamplerParams(Section):
    """Optuna's TPE sampler, seeded from params ``seed``.

    ``constant_liar`` makes a worker treat the trials other workers are running as bad,
    so that several workers sharing a study do not all propose the same point.
    """

    type: Literal["tpe"]
    n_startup_trials: Annotated[int, Field(ge=0)]
    multivariate: bool
    constant_liar: bool


class PrunerParams(Section):
    """Optuna's median pruner: stop a trial worse than the median at the same step.

    A trial is pruned when its intermediate metric is worse than the median of earlier
    trials' at the same step. ``warmup_steps`` is in steps of the story's budget and
    scales like every step count (by the study's ``budget`` times ``budget.scale``); no
    trial is pruned before it, nor before ``n_startup_trials`` trials have finished.
    """

    type: Literal["median"]
    n_startup_trials: Annotated[int, Field(ge=0)]
    warmup_steps: Annotated[int, Field(ge=0)]


class StudyParams(Section):
    """One Optuna study: which variant, which axes, how many trials at which budget.

    ``references`` are the story's own choices, run as fixed trials before any sampled one
    (Optuna's ``enqueue_trial``), once per study however many workers share it; they count
    toward ``trials``. Each gives every searched axis a value inside its space. The
    sampler alone may never draw the one point the story's question is about (the ``dk``
    study's d_head = 32 divided, ``warmup``'s post-norm with 200 warmup steps).
    """

    variant: str
    trials: PositiveInt
    budget: Annotated[float, Field(gt=0.0, le=1.0)]
    metric: Literal["val/ppl"]
    direction: Literal["minimize"]
    sampler: SamplerParams
    pruner: PrunerParams
    space: Annotated[dict[str, Axis], Field(min_length=1)]
    references: list[dict[str, Choice]]

    @model_validator(mode="wrap")
    @classmethod
    def _name_axes_plainly(cls, data: Any, handler: ModelWrapValidatorHandler) -> "StudyParams":
        # Pydantic puts the union's tag in the key (space.d_head.int.low); drop it, so an
        # error names the key as it is written in params.yaml (space.d_head.low).
        try:
            return handler(data)
        except ValidationError as err:
            errors = []
            for error in err.errors(include_url=False):
                loc = error["loc"]
                if len(loc) > 2 and loc[0] == "space" and loc[2] in _AXIS_TAGS:
                    loc = (*loc[:2], *loc[3:])
                errors.append(
                    InitErrorDetails(
                        type=error["type"], loc=loc, input=error["input"], ctx=error.get("ctx", {})
                    )
                )
            raise ValidationError.from_exception_data(err.title, errors) from None


class SweepsParams(Section):
    """Every study, and the storage and fault handling they share.

    ``storage`` None is a journal file per study under ``data/sweeps/``, which the
    ``workers`` of the stage share (``auto``: one per CPU core the stage may use, or per
    GPU); otherwise an RDB URL (``postgresql://user@host/db``) that every worker of every
    machine shares. The environment variable ``ATTNLAB_OPTUNA_STORAGE`` overrides it, so a
    password need not live in params.yaml. A trial failed for a silent heartbeat (params
    ``runtime.sweeps``: its worker died) is retried with the same params, at most
    ``max_retry`` times. A worker stops
    with an error once its study holds ``max_failed`` trials that raised (a bug, not bad
    luck).
    """

    storage: Annotated[str, Field(pattern=r"^[a-z][a-z0-9+]*://")] | None
    workers: PositiveInt | Literal["auto"]
    max_retry: Annotated[int, Field(ge=0)]
    max_failed: PositiveInt
    studies: dict[str, StudyParams]

    @model_validator(mode="after")
    def _study_names_are_kebab_case(self) -> "SweepsParams":
        for name in self.studies:
            if not _STUDY_NAME.fullmatch(name):
                raise ValueError(f"studies.{name}: expected a kebab-case name")
        return self


_MODEL_FIELDS = {f.name for f in dataclasses.fields(ModelConfig)} - {"vocab_size"}
_TRAIN_FIELDS = set(TrainParams.model_fields)


def _overrides(base: VariantOverrides, values: dict[str, Any]) -> VariantOverrides:
    model = {k: v for k, v in values.items() if k in _MODEL_FIELDS}
    train = {k: v for k, v in values.items() if k in _TRAIN_FIELDS}
    return VariantOverrides(model={**base.model, **model}, train={**base.train, **train})


def trial_variant(
    name: str,
    study: StudyParams,
    values: dict[str, Any],
    variants: dict[str, VariantOverrides],
    model_defaults: dict[str, Any],
    train_defaults: TrainParams,
    vocab_size: int,
) -> Variant:
    """The study's variant with one trial's ``values`` (keyed by field) set over it.

    Args:
        name: The resolved variant's name (the trial's, e.g. ``sweep-dk-7``).
        study: The study; ``study.variant`` names the variant the trial starts from.
        values: One value per axis of ``study.space``.
        variants: Every variant's overrides (params ``variants``).
        model_defaults: Params ``model``.
        train_defaults: Params ``train``.
        vocab_size: Params ``bpe.vocab_size``.

    Raises:
        ParamsError: the values make an invalid model or recipe (naming the field).
    """
    base = variants[study.variant]
    return resolve_variant(
        name, _overrides(base, values), model_defaults, train_defaults, vocab_size
    )


def catalogue_choice(study: StudyParams, variant: Variant) -> dict[str, Any]:
    """The catalogue's choice a study is answered against: ``variant``'s value of each axis.

    ``variant`` is the study's own variant, resolved (``params.variant(study.variant)``).
    """
    model = dataclasses.asdict(variant.model)
    return {
        axis: model[axis] if axis in model else getattr(variant.train, axis) for axis in study.space
    }


def check_study(
    name: str,
    study: StudyParams,
    variants: dict[str, VariantOverrides],
    model_defaults: dict[str, Any],
    train_defaults: TrainParams,
    vocab_size: int,
) -> None:
    """Refuse a study that does not fit its trials, before the first one.

    Refused: an unknown variant or field; a point that makes an invalid model or recipe
    (a d_head the model refuses, a warmup longer than the trial: every point of a space
    is resolved, both ends of a very wide range); a pruner warm-up that reaches the last
    step of the shortest trial, so that nothing could ever be pruned; a reference trial
    that is not a point of the space (see :func:`_check_references`).

    Raises:
        ParamsError: naming ``sweeps.studies.<name>.variant``,
            ``sweeps.studies.<name>.space.<field>``, ``...pruner.warmup_steps`` or
            ``...references[<i>].<field>``.
    """
    key = f"sweeps.studies.{name}"
    if study.variant not in variants:
        known = ", ".join(sorted(variants))
        raise ParamsError(f"{key}.variant: no variant {study.variant!r}; known: {known}")
    for field in study.space:
        if field not in _MODEL_FIELDS | _TRAIN_FIELDS:
            raise ParamsError(
                f"{key}.space.{field}: unknown parameter (not a field of model or train)"
            )
    fields = list(study.space)
    grid = [study.space[field].values() for field in fields]
    shortest = None
    for checked, point in enumerate(itertools.product(*grid), start=1):
        values = dict(zip(fields, point, strict=True))
        try:
            variant = trial_variant(
                name, study, values, variants, model_defaults, train_defaults, vocab_size
            )
        except ParamsError as err:
            raise ParamsError(_point_error(f"{key}.space", values, str(err))) from None
        shortest = min(variant.train.steps, shortest or variant.train.steps)
        if checked >= _CHECKED_POINTS:
            break
    warmup = study.pruner.warmup_steps
    if shortest is not None and warmup >= shortest:
        raise ParamsError(
            f"{key}.pruner.warmup_steps: {warmup} steps is not before the last step of the "
            f"shortest trial ({shortest} steps at the story's budget): no trial could be pruned"
        )
    _check_references(key, study)
    for index, values in enumerate(study.references):
        try:
            trial_variant(name, study, values, variants, model_defaults, train_defaults, vocab_size)
        except ParamsError as err:  # a point between a wide range's two checked ends
            raise ParamsError(
                _point_error(f"{key}.references[{index}]", values, str(err))
            ) from None


def _check_references(key: str, study: StudyParams) -> None:
    """Refuse a reference trial that the study could not run as the story means it.

    Each reference must give every searched axis (a partial one would leave Optuna to
    sample the rest, and the story's point would not be the one run) a value inside its
    space (Optuna would run a value outside it with only a warning), must differ from the
    others, and all of them must fit in the study's ``trials``: they count toward it.
    """
    references = study.references
    if len(references) > study.trials:
        raise ParamsError(
            f"{key}.references: {len(references)} reference trials do not fit in trials "
            f"({study.trials}): they count toward it"
        )
    axes = ", ".join(study.space)
    for index, reference in enumerate(references):
        where = f"{key}.references[{index}]"
        for field, value in reference.items():
            if field not in study.space:
                raise ParamsError(f"{where}.{field}: not a searched parameter (space: {axes})")
            axis = study.space[field]
            if not axis.contains(value):
                space = ", ".join(f"{k}: {v}" for k, v in axis.model_dump(exclude={"type"}).items())
                raise ParamsError(
                    f"{where}.{field}: {value!r} is outside the search space ({space})"
                )
        for field in study.space:
            if field not in reference:
                raise ParamsError(
                    f"{where}.{field}: missing: a reference gives every searched parameter "
                    "its value"
                )
        if reference in references[:index]:
            raise ParamsError(f"{where}: repeats references[{references.index(reference)}]")


def _point_error(where: str, values: dict[str, Any], message: str) -> str:
    """Name the axis the model or recipe complained about, with the point that did it.

    ``where`` is the key the point belongs to (``sweeps.studies.<name>.space``).
    """
    # resolve_variant's message is "variants.<name>.<model|train>.<field>: <why>".
    named, _, why = message.partition(": ")
    field = named.rsplit(".", 1)[-1]
    if field not in values:  # a cross-field check (warmup_steps > steps): find the axis named
        field = next((k for k in values if k in why), next(iter(values)))
    point = ", ".join(f"{k}={v!r}" for k, v in values.items())
    return f"{where}.{field}: {point} makes an invalid variant: {why}"
