"""The typed shape of the experiment catalogue (``experiments.yaml``), validated on load.

Every model forbids unknown keys, so a misspelt field fails when the catalogue is read,
naming where. The entries say what an experiment of docs/catalogue.md *is*: its rows, what
is measured on them, its claims with their rules and thresholds, its figures and charts.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

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

    id: Annotated[str, Field(pattern=r"^E\d\d\.\d+$")]
    says: str
    reading: str


class Experiment(Model):
    """One experiment of the catalogue (its id is its key in ``experiments``).

    Attributes:
        title: The report section's title.
        question: The story's question, as the report asks it.
        doc: Where docs/catalogue.md describes its protocol (``path#anchor``).
        code: The modules that build, measure and report it.
        rows: The trained rows it compares, in the story's order.
        measure: What the evaluate stage adds for its rows beyond P0's perplexity.
        task: The Winograd task its rows train on (E16, E17).
        probe: The metrics file a computed experiment's stage writes (no suffix).
        tables: The TSV tables that stage writes.
        figures: The figures its stages draw (paths in the repository).
        claims: Its claims, in order.
    """

    title: str
    question: str
    doc: str
    code: Annotated[list[str], Field(min_length=1)]
    rows: list[Row] = []
    measure: list[Measurement] = []
    task: Task | None = None
    probe: str | None = None
    tables: list[TableFile] = []
    figures: list[str] = []
    claims: list[ClaimSpec] = []

    @property
    def variants(self) -> list[str]:
        """The rows' variant (or alias) names, in order."""
        return [row.variant for row in self.rows]


class Chart(Model):
    """A dvc.yaml top-level plot: one curve of every row of ``experiments``."""

    title: str
    experiments: Annotated[list[ExperimentId], Field(min_length=1)]
    curve: Curve


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
        for chart in self.charts:
            unknown = [e for e in chart.experiments if e not in self.experiments]
            if unknown:
                raise ValueError(f"charts: {chart.title!r} names no experiment {unknown[0]}")
        return self
