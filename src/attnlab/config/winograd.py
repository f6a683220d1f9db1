"""Params of the Winograd task (E16 leaky, E17 closed): words, hold-outs, variants, maps.

The Winograd models are word-level: their vocabulary is the task's words (a few dozen), not
the BPE tokenizer, and their context is the template's length. Both sizes are derived from
the params here, never set, so ``winograd.model`` holds every model field but ``vocab_size``
and ``block_size``. The task a variant trains on is its experiment's (E16 leaky, E17 closed,
in the catalogue :mod:`attnlab.catalogue`): a variant no Winograd experiment lists is refused.

The params are checked against the tasks' facts in the catalogue
(:mod:`attnlab.catalogue.winograd`: the template's words and length, the designs, how many
nouns a share holds out), so that a variant's model is validated when params load, before
any work. Nothing is built here: the sentences and the vocabulary are the task's own
(:mod:`attnlab.winograd`), built from these values.
"""

from typing import Annotated, Any, get_args

from pydantic import Field, PrivateAttr, field_validator, model_validator

from attnlab.catalogue import Task, winograd_task
from attnlab.catalogue.winograd import (
    FUNCTION_WORDS,
    SENTENCE_LENGTH,
    ClosedDesign,
    LeakyDesign,
    check_words,
    nouns_held_out,
)
from attnlab.config.base import Section
from attnlab.config.variants import (
    TrainParams,
    Variant,
    VariantOverrides,
    check_variant_name,
    resolve_variant,
)
from attnlab.errors import ParamsError

TASKS: tuple[Task, ...] = get_args(Task)
# A model reads a sentence without its last word: 17 positions.
BLOCK_SIZE = SENTENCE_LENGTH - 1
_Words = Annotated[list[str], Field(min_length=1)]
_Share = Annotated[float, Field(gt=0.0, lt=1.0)]


class AdjectiveParams(Section):
    """The adjectives by role: ``crosser`` ones make *it* x, ``crossed`` ones make it y."""

    crosser: _Words
    crossed: _Words


class LeakyHeldOut(Section):
    """E16's held-out design: ``pairs`` of animal and place, or whole ``nouns``."""

    design: LeakyDesign
    share: _Share


class ClosedHeldOut(Section):
    """E17's held-out design: one ``orientation`` of a pair, whole ``pairs``, or ``nouns``."""

    design: ClosedDesign
    share: _Share


class LeakyParams(Section):
    """E16: x from ``animals``, y from ``places``; what is held out is ``held_out``."""

    animals: Annotated[list[str], Field(min_length=2)]
    places: Annotated[list[str], Field(min_length=2)]
    held_out: LeakyHeldOut

    @model_validator(mode="after")
    def _nouns_left_to_train(self) -> "LeakyParams":
        if self.held_out.design == "nouns":
            for key, pool in (("animals", self.animals), ("places", self.places)):
                _check_nouns(key, pool, self.held_out.share, "leaky")
        return self


class ClosedParams(Section):
    """E17: x != y from one pool; what is held out is ``held_out``."""

    nouns: Annotated[list[str], Field(min_length=3)]
    held_out: ClosedHeldOut

    @model_validator(mode="after")
    def _nouns_left_to_train(self) -> "ClosedParams":
        if self.held_out.design == "nouns":
            _check_nouns("nouns", self.nouns, self.held_out.share, "closed")
        return self


def _check_nouns(key: str, pool: list[str], share: float, task: Task) -> None:
    """Refuse a ``nouns`` design that would leave too few of ``pool`` to train on."""
    try:
        nouns_held_out(len(pool), share, task)
    except ValueError as err:
        raise ParamsError(f"held_out.share: {err} ({key})") from None


class MapsParams(Section):
    """Which model's attention is drawn, on which two nouns, and which adjectives per block."""

    variant: str
    x: str
    y: str
    adjectives: _Words


class WinogradParams(Section):
    """The ``winograd`` section: both tasks, their models' defaults, variants and maps."""

    adjectives: AdjectiveParams
    leaky: LeakyParams
    closed: ClosedParams
    model: dict[str, Any]
    train: TrainParams
    torch_threads: Annotated[int, Field(ge=1, le=256)]
    variants: dict[str, VariantOverrides]
    maps: MapsParams

    _resolved: dict[str, Variant] = PrivateAttr(default_factory=dict)
    _tasks: dict[str, Task] = PrivateAttr(default_factory=dict)

    @field_validator("model")
    @classmethod
    def _sizes_are_derived(cls, model: dict[str, Any]) -> dict[str, Any]:
        for key, source in (("vocab_size", "the task's words"), ("block_size", "the template")):
            if key in model:
                raise ValueError(f"{key} is not set here: it comes from {source}")
        return model

    @model_validator(mode="after")
    def _resolve(self) -> "WinogradParams":
        # A ParamsError is a ValueError: pydantic reports it under "winograd: ".
        vocab_size = {task: self.vocab_size(task) for task in TASKS}
        for name, overrides in self.variants.items():
            check_variant_name(name)
            task = winograd_task(name)
            if task is None:
                raise ParamsError(
                    f"variants.{name}: no Winograd experiment of the catalogue (E16, E17) "
                    "has this row, so it has no task to train on"
                )
            self._tasks[name] = task
            model_defaults = {**self.model, "block_size": BLOCK_SIZE}
            self._resolved[name] = resolve_variant(
                name, overrides, model_defaults, self.train, vocab_size[task]
            )
        self._check_maps()
        return self

    def _check_maps(self) -> None:
        maps = self.maps
        if maps.variant not in self._resolved:
            raise ParamsError(f"maps.variant: no Winograd variant is called {maps.variant!r}")
        if self._resolved[maps.variant].model.mixer != "attention":
            raise ParamsError(f"maps.variant: {maps.variant} has no attention to draw")
        nouns = self.nouns(self.task_of(maps.variant))
        for key, noun in (("x", maps.x), ("y", maps.y)):
            if noun not in nouns:
                raise ParamsError(f"maps.{key}: {noun!r} is not a noun of {maps.variant}'s task")
        if maps.x == maps.y:
            raise ParamsError("maps.y: must differ from maps.x")
        known = {*self.adjectives.crosser, *self.adjectives.crossed}
        for adjective in maps.adjectives:
            if adjective not in known:
                raise ParamsError(f"maps.adjectives: {adjective!r} is not an adjective")

    def nouns(self, task: Task) -> list[str]:
        """Every noun of ``task``, in params order."""
        return [*self.leaky.animals, *self.leaky.places] if task == "leaky" else self.closed.nouns

    def vocab_size(self, task: Task) -> int:
        """How many words ``task``'s models read: the template's, the adjectives, the nouns.

        Raises:
            ValueError: a word is not a single token, or two are the same.
        """
        adjectives = [*self.adjectives.crosser, *self.adjectives.crossed]
        nouns = self.nouns(task)
        check_words(adjectives, nouns)
        return len(FUNCTION_WORDS) + len(adjectives) + len(nouns)

    def task_of(self, name: str) -> Task:
        """The task variant ``name`` trains on: its experiment's, in the catalogue."""
        self.variant(name)
        return self._tasks[name]

    def resolved(self, name: str) -> Variant | None:
        """The resolved Winograd variant ``name``, or ``None`` when there is none."""
        return self._resolved.get(name)

    def variant(self, name: str) -> Variant:
        """The resolved Winograd variant ``name``.

        Raises:
            ParamsError: no Winograd variant has that name (the message lists them).
        """
        if name not in self._resolved:
            known = ", ".join(sorted(self._resolved))
            raise ParamsError(f"winograd.variants.{name}: no such variant; known: {known}")
        return self._resolved[name]
