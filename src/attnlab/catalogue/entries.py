"""The typed shape of the experiment catalogue (``experiments.yaml``), validated on load.

Every model forbids unknown keys, so a misspelt field fails when the catalogue is read,
naming where. The entries say what an experiment of docs/catalogue.md *is*: its rows, what
is measured on them, its claims with their rules and thresholds, its figures and charts.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

# What the evaluate stage may add for an experiment's rows (its ``measure``): the one list
# of these names; the evaluate stage's registry takes each (a test holds them equal).
Measurement = Literal["extrapolation", "score_stats", "grad_norms"]
Task = Literal["leaky", "closed"]
Curve = Literal["train_loss", "val_ppl", "winograd_loss"]
RuleName = Literal[
    "ratio_in",
    "greater",
    "in_range",
    "each_in_range",
    "lowest",
    "below_chance",
    "all_of",
    "maps_identical",
    "maps_first_noun",
    "maps_reads_adjective",
    "maps_fetches",
]
ExperimentId = Annotated[str, Field(pattern=r"^(P0|E\d\d|sweeps)$")]


class Model(BaseModel):
    """A frozen catalogue model that rejects unknown keys."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Row(Model):
    """One row of a trained experiment: a variant (or an alias of one) and its label.

    ``adds`` (E02), ``protocol``, ``d_k`` and ``divided`` (E08, E09) are what the row's
    table prints beside it.
    """

    variant: str
    label: str
    adds: str | None = None
    protocol: str | None = None
    d_k: int | None = None
    divided: bool | None = None


class TableFile(Model):
    """A TSV table a computed experiment's stage writes (under the tables folder, no suffix)."""

    file: str
    title: str


class Measure(Model):
    """One measurement a claim reads: ``key`` of metrics file ``source``, shown as ``label``.

    ``exact``: a computation with no seed to vary, decided as a point. ``each``: ``key``
    is a prefix and every key that starts with it is decided.
    """

    source: str
    key: str
    label: str
    exact: bool = False
    each: bool = False


class Threshold(Model):
    """A claim's range: ``[lo, hi]`` (an open side when absent), exclusive when ``strict``."""

    lo: float | None = None
    hi: float | None = None
    strict: bool = False


class RuleSpec(Model):
    """A rule applied to measurements: the rule's name, what it reads, its threshold.

    ``compare`` and ``or_equal`` are the options of ``greater``; ``parts`` the rules an
    ``all_of`` joins.
    """

    rule: RuleName
    of: list[Measure] = []
    threshold: Threshold = Threshold()
    compare: Literal["ratio", "difference"] = "ratio"
    or_equal: bool = False
    parts: list[RuleSpec] = []

    @model_validator(mode="after")
    def _parts_only_for_all_of(self) -> RuleSpec:
        if (self.rule == "all_of") != bool(self.parts):
            raise ValueError("an all_of rule has parts (and nothing it reads itself); no other has")
        return self


class ClaimSpec(RuleSpec):
    """A claim of the story: its id, its words, its rule, and how the threshold reads them."""

    id: Annotated[str, Field(pattern=r"^(E\d\d\.\d+|sweeps\.\w+)$")]
    says: str
    reading: str


class Overrides(Model):
    """What a protocol changes on every row: ``model`` and ``train`` keys, as in params."""

    model: dict[str, Any] = {}
    train: dict[str, Any] = {}

    def flat(self) -> dict[str, Any]:
        """Every override as ``section.key``: ``{"model.dropout": 0.1}``."""
        return {
            **{f"model.{k}": v for k, v in self.model.items()},
            **{f"train.{k}": v for k, v in self.train.items()},
        }


class Protocol(Model):
    """An alternative protocol of an experiment over a choice the story leaves open.

    A protocol either trains (``overrides`` and ``rows``: each row retrained under the
    choice) or only measures differently (``keys``: the same runs, their claims reading
    another definition the evaluation records beside the main one). Never both.

    Attributes:
        choice: The choice in words, as the robustness table reads it ("holds when ...").
        overrides: What it changes on every row, relative to the row's own variant.
        rows: Each row of the experiment (its variant or alias name) and the trained
            variant that is that row under this protocol. The params loader checks that
            each differs from its row by exactly ``overrides``.
        keys: Metric key prefixes the claims read and the prefix read instead
            (``grad_norm/`` -> ``grad_norm_weights_rms/``): nothing retrains. The first
            prefix listed that a key starts with applies.
        reads: The record of each run the keys are read from: ``eval`` (``eval.json``,
            what the evaluate stage measured) or ``train`` (``train.json``, what training
            recorded: the early-stopping point). A key the record lacks is not measured
            under the protocol, and its claim is "not run" there.
    """

    choice: str
    overrides: Overrides = Overrides()
    rows: dict[str, str] = {}
    keys: dict[str, str] = {}
    reads: Literal["eval", "train"] = "eval"

    @model_validator(mode="after")
    def _trains_or_measures(self) -> Protocol:
        if self.keys and (self.rows or self.overrides.flat()):
            raise ValueError("a protocol either retrains (overrides, rows) or re-reads (keys)")
        if self.reads != "eval" and not self.keys:
            raise ValueError("a protocol that retrains reads its rows' own records: no reads")
        if not self.keys and not self.overrides.flat():
            raise ValueError("a protocol overrides at least one model or train key")
        if not self.keys and not self.rows:
            raise ValueError("a protocol that overrides maps its rows to trained variants")
        return self


class Experiment(Model):
    """One experiment of the catalogue (its id is its key in ``experiments``).

    Attributes:
        title: The report section's title.
        question: The story's question, as the report asks it.
        doc: Where docs/catalogue.md describes its protocol (``path#anchor``).
        code: The modules that shape its numbers, decide it and lay it out (a package: all
            of its modules); P0's names the pipeline every trained row runs, another what it
            adds.
        rows: The trained rows it compares, in the story's order.
        measure: What the evaluate stage adds for its rows beyond P0's perplexity.
        along: Those of ``measure`` also taken at the log-spaced steps whose weights the
            training keeps (:mod:`attnlab.training.along_steps`): its rows' runs keep them.
        task: The Winograd task its rows train on (E16, E17).
        probe: The metrics file a computed experiment's stage writes (no suffix).
        tables: The TSV tables that stage writes.
        figures: The figures its stages draw (paths in the repository).
        claims: Its claims, in order.
        protocols: Alternative protocols over choices the story leaves open, by name;
            every claim is decided under each (:mod:`attnlab.verdicts.robustness`) and
            shown beside the main verdict.
    """

    title: str
    question: str
    doc: str
    code: Annotated[list[str], Field(min_length=1)]
    rows: list[Row] = []
    measure: list[Measurement] = []
    along: list[Measurement] = []
    task: Task | None = None
    probe: str | None = None
    tables: list[TableFile] = []
    figures: list[str] = []
    claims: list[ClaimSpec] = []
    protocols: dict[str, Protocol] = {}

    @property
    def variants(self) -> list[str]:
        """The rows' variant (or alias) names, in order."""
        return [row.variant for row in self.rows]

    @property
    def protocol_variants(self) -> list[str]:
        """The trained variants of every protocol, in order (none is a row)."""
        return [name for p in self.protocols.values() for name in p.rows.values()]

    @model_validator(mode="after")
    def _along_is_measured(self) -> Experiment:
        missing = [m for m in self.along if m not in self.measure]
        if missing:
            raise ValueError(f"along: {missing[0]} is not among measure")
        return self

    @model_validator(mode="after")
    def _protocols_map_every_row(self) -> Experiment:
        # A protocol that left a row out would decide a claim from two protocols at once.
        for name, protocol in self.protocols.items():
            if protocol.keys:
                continue  # the rows' own runs, re-read
            where = f"protocols.{name}.rows"
            unknown = [row for row in protocol.rows if row not in self.variants]
            if unknown:
                raise ValueError(f"{where}.{unknown[0]}: not a row of this experiment")
            left_out = [row for row in self.variants if row not in protocol.rows]
            if left_out:
                raise ValueError(f"{where}: maps no variant to row {left_out[0]}")
            rows = [r for r, variant in protocol.rows.items() if variant in self.variants]
            if rows:
                raise ValueError(f"{where}.{rows[0]}: a protocol's variant is no row")
        return self


class Chart(Model):
    """A chart of ``dvc plots show``: one curve of every row of ``experiments``."""

    experiments: Annotated[list[ExperimentId], Field(min_length=1)]
    curve: Curve

    @property
    def name(self) -> str:
        """Its file's stem, shown as its title: ``E02-train-loss``, ``E16-E17-winograd-loss``."""
        return "-".join([*self.experiments, self.curve.replace("_", "-")])


class Catalogue(Model):
    """The whole catalogue: every experiment by id, in the story's order, and the charts."""

    experiments: dict[ExperimentId, Experiment]
    charts: list[Chart]

    @model_validator(mode="after")
    def _references_resolve(self) -> Catalogue:
        ids = [claim.id for entry in self.experiments.values() for claim in entry.claims]
        if len(ids) != len(set(ids)):
            raise ValueError(f"a claim id is used twice: {sorted(ids)}")
        for name, entry in self.experiments.items():
            for claim in entry.claims:
                if not claim.id.startswith(f"{name}."):
                    raise ValueError(f"experiments.{name}: claim {claim.id} is another's")
        rows = {name for entry in self.experiments.values() for name in entry.variants}
        seen: set[str] = set()
        for name, entry in self.experiments.items():
            for variant in entry.protocol_variants:
                if variant in rows or variant in seen:
                    raise ValueError(
                        f"experiments.{name}.protocols: {variant} is already a row or another "
                        "protocol's variant (each protocol trains its own runs)"
                    )
                seen.add(variant)
        names = [chart.name for chart in self.charts]
        for chart in self.charts:
            unknown = [e for e in chart.experiments if e not in self.experiments]
            if unknown:
                raise ValueError(f"charts: {chart.name} names no experiment {unknown[0]}")
            if names.count(chart.name) > 1:
                raise ValueError(f"charts: {chart.name} is listed twice")
        return self
