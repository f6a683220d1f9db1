"""Turn the params files into typed, frozen config objects, or fail naming the offending key."""

from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, PrivateAttr, ValidationError, field_validator, model_validator

from attnlab.catalogue import along_of, experiments, experiments_of
from attnlab.config.base import Section
from attnlab.config.data import BpeParams, DownloadParams, TokenizeParams
from attnlab.config.evaluation import EvaluateParams
from attnlab.config.extra_seeds import ExtraSeedsParams, check_extra_seeds
from attnlab.config.files import DEFAULT_FILE, file_of, read_params_mapping
from attnlab.config.probes import CostParams, ProbesParams
from attnlab.config.protocols import check_protocols
from attnlab.config.sweeps import SweepsParams, check_study
from attnlab.config.training import RuntimeParams, TrainerParams
from attnlab.config.variants import (
    BudgetParams,
    Seed,
    TrainParams,
    Variant,
    VariantOverrides,
    build_model_config,
    check_aliases,
    check_variant_name,
    resolve_variant,
)
from attnlab.config.winograd import WinogradParams
from attnlab.errors import ParamsError


class Params(Section):
    """Everything in the params files; each stage reads only the sections dvc.yaml declares.

    No field has a default: a knob missing from params.yaml is an error, so nothing that
    changes a result can hide in code where DVC does not track it.
    """

    seed: Seed
    seeds: Annotated[list[Seed], Field(min_length=1)]
    extra_seeds: ExtraSeedsParams
    download: DownloadParams
    bpe: BpeParams
    tokenize: TokenizeParams
    probes: ProbesParams
    cost: CostParams
    budget: BudgetParams
    model: dict[str, Any]
    train: TrainParams
    variants: dict[str, VariantOverrides]
    aliases: dict[str, str]
    evaluate: EvaluateParams
    trainer: TrainerParams
    runtime: RuntimeParams
    sweeps: SweepsParams
    winograd: WinogradParams

    _resolved: dict[str, Variant] = PrivateAttr(default_factory=dict)

    @field_validator("model")
    @classmethod
    def _vocab_is_derived(cls, model: dict[str, Any]) -> dict[str, Any]:
        if "vocab_size" in model:
            raise ValueError("vocab_size is not set here: it is bpe.vocab_size")
        return model

    @field_validator("seeds")
    @classmethod
    def _seeds_are_distinct(cls, seeds: list[int]) -> list[int]:
        # Two equal seeds would be one run under two stage names, counted twice.
        repeated = sorted({seed for seed in seeds if seeds.count(seed) > 1})
        if repeated:
            raise ValueError(f"seed {repeated[0]} is listed twice")
        return seeds

    @model_validator(mode="after")
    def _resolve_every_variant(self) -> "Params":
        # Resolving all variants here means a bad override fails every stage up front,
        # before any data is read or any step is trained. The shared model comes first,
        # so an error in it is named under `model`, not under the first variant.
        build_model_config({**self.model, "vocab_size": self.bpe.vocab_size}, "model")
        for name, overrides in self.variants.items():
            check_variant_name(name)
            self._resolved[name] = resolve_variant(
                name, overrides, self.model, self.train, self.bpe.vocab_size
            )
        return self

    @model_validator(mode="after")
    def _check_aliases(self) -> "Params":
        check_aliases(self.aliases, self.variants)
        return self

    @model_validator(mode="after")
    def _check_extra_seeds(self) -> "Params":
        # Aliases are no variants: they have no stages to run under more seeds.
        variants, winograd = set(self.variants), set(self.winograd.variants)
        check_extra_seeds(self.extra_seeds, self.seeds, variants, winograd)
        return self

    def seeds_of(self, variant: str) -> list[int]:
        """The seeds ``variant`` runs under: ``seeds``, then those ``extra_seeds`` adds."""
        return [*self.seeds, *self.extra_seeds.seeds_of(variant)]

    @model_validator(mode="after")
    def _check_protocols(self) -> "Params":
        # The catalogue's protocols name variants of this file: each must be its row with
        # exactly the protocol's overrides, or the robustness table would compare more.
        check_protocols(experiments(), self.resolved_variant, self.aliases, require_all=False)
        return self

    def resolved_variant(self, name: str) -> Variant | None:
        """The resolved variant ``name`` of ``variants`` or ``winograd.variants``, if any."""
        found = self._resolved.get(name)
        return found if found is not None else self.winograd.resolved(name)

    @model_validator(mode="after")
    def _check_every_study(self) -> "Params":
        # Every point of every search space must build a valid variant: a bad space
        # fails here, naming its key, before any study starts a trial.
        for name, study in self.sweeps.studies.items():
            check_study(name, study, self.variants, self.model, self.train, self.bpe.vocab_size)
        return self

    def variant(self, name: str) -> Variant:
        """The resolved variant called ``name``.

        Raises:
            ParamsError: no variant has that name (the message lists the known ones), or
                the name is an alias, which trains and measures nothing of its own.
        """
        if name in self.aliases:
            raise ParamsError(
                f"variants.{name}: an alias of {self.aliases[name]} (aliases.{name}): it has "
                f"no runs of its own and reads {self.aliases[name]}'s"
            )
        if name not in self._resolved:
            known = ", ".join(sorted(self._resolved))
            raise ParamsError(f"variants.{name}: no such variant; known: {known}")
        return self._resolved[name]

    def aliases_of(self, name: str) -> tuple[str, ...]:
        """The aliases whose rows read variant ``name``'s runs, in params order."""
        return tuple(alias for alias, shared in self.aliases.items() if shared == name)

    def experiments_reading(self, name: str) -> tuple[str, ...]:
        """The catalogue ids of the experiments whose rows read variant ``name``'s runs.

        Those with the variant or one of its aliases among their rows, in the catalogue's
        order. The evaluate stage measures a run for all of them (E08's score statistics
        of the d_k = 32 row are measured on ``ladder-layernorm``, the run that row reads).
        """
        self.variant(name)  # an unknown name or an alias: ParamsError
        return experiments_of(name, *self.aliases_of(name))

    def measured_along(self, name: str) -> tuple[str, ...]:
        """What those experiments measure along training on variant ``name``'s runs (E09, E11).

        Non-empty exactly when the runs keep their weights at log-spaced steps: the train
        stage keeps them, the evaluate stage measures them (the catalogue's ``along``).
        """
        return along_of(self.experiments_reading(name))


def _key(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc)


def _describe(error: dict[str, Any]) -> str:
    message = error["msg"].removeprefix("Value error, ")
    if error["type"] == "extra_forbidden":
        message = "unknown key (not a parameter of attnlab; check its spelling)"
    elif error["type"] == "missing":
        message = "required key is missing"
    # Cross-section checks (the variants) already name their key inside the message.
    return f"{_key(error['loc'])}: {message}" if error["loc"] else message


def parse_params(raw: Any, source: str = "params") -> Params:
    """Validate an already-parsed params mapping (all the params files' sections).

    Args:
        raw: The mapping.
        source: What the mapping was read from, for the message; ``params.yaml`` of a
            project names, for each offending key, the file beside it that holds it.

    Raises:
        ParamsError: one line per offending key, each starting with its dotted path
            (``download.sha256: expected 64 hex characters (lower case)``).
    """
    if not isinstance(raw, dict):
        raise ParamsError(f"{source}: expected a mapping at the top level")
    try:
        return Params.model_validate(raw)
    except ValidationError as err:
        lines = [_describe(e) for e in err.errors(include_url=False)]
        raise ParamsError(
            f"{_invalid_files(source, lines)} invalid:\n  " + "\n  ".join(lines)
        ) from None


def _invalid_files(source: str, lines: list[str]) -> str:
    """``params.yaml is`` or, beside it, the files that hold the offending keys.

    Each line starts with its dotted key, whose section names the file (a check across
    sections names its key the same way); a line without one is params.yaml's.
    """
    if Path(source).name != DEFAULT_FILE:
        return f"{source} is"
    homes = sorted({file_of(line.partition(":")[0].partition(".")[0]) for line in lines})
    named = [str(Path(source).with_name(home)) for home in homes]
    return f"{named[0]} is" if len(named) == 1 else f"{', '.join(named)} are"


def load_params(path: Path | str) -> Params:
    """Read and validate ``params.yaml`` and the files beside it, before any stage works.

    Raises:
        ParamsError: a file is missing, is not YAML, or holds an invalid value.
    """
    return parse_params(read_params_mapping(path), source=str(path))
