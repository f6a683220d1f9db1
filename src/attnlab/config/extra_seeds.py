"""More seeds for a few rows: params ``extra_seeds`` beside the catalogue's ``seeds``.

Three seeds leave some claims undecided (docs/catalogue.md, Seeds). Where a claim's rows
are cheap, ``extra_seeds`` trains them under more seeds without training the whole
catalogue again: each of P0's variants it lists (``variants``) also runs under each of its
``seeds``, as the stages ``train-extra@<variant>-<seed>`` and ``evaluate-extra@...``, and
each Winograd model it lists (``winograd_variants``) under each of its ``winograd_seeds``,
as ``winograd-train-extra@...`` and ``winograd-score-extra@...``: dvc.yaml's ``train``
(and so on) stages over these seeds. The Winograd models have a list of their own, as
one trains in under a minute, about a hundredth of a language model's run. Their outputs
sit where any run's do, so the report reads a row's runs under all its seeds alike.
"""

from pydantic import field_validator

from attnlab.config.base import Section
from attnlab.config.variants import Seed

EXTRA = "-extra"  # what a family's stage name gains for a seed of extra_seeds


class ExtraSeedsParams(Section):
    """The seeds a few of P0's ``variants`` also run under, and those of the Winograd task."""

    seeds: list[Seed]
    variants: list[str]
    winograd_seeds: list[Seed]
    winograd_variants: list[str]

    @field_validator("seeds", "variants", "winograd_seeds", "winograd_variants")
    @classmethod
    def _nothing_twice(cls, values: list) -> list:
        repeated = sorted({str(v) for v in values if values.count(v) > 1})
        if repeated:
            raise ValueError(f"{repeated[0]} is listed twice")
        return values

    def seeds_of(self, variant: str) -> list[int]:
        """The seeds ``variant`` runs under besides params ``seeds``: none if it is not listed."""
        if variant in self.variants:
            return self.seeds
        return self.winograd_seeds if variant in self.winograd_variants else []


def check_extra_seeds(
    extra: ExtraSeedsParams, seeds: list[int], variants: set[str], winograd: set[str]
) -> None:
    """Each listed variant exists where it is listed, and no seed is one of ``seeds`` too.

    A seed in both lists would make two stages write one run's files, which DVC refuses
    only once it reads dvc.yaml, after other stages may have run.

    Raises:
        ValueError: naming ``extra_seeds.<key>`` and what is wrong.
    """
    for key in ("seeds", "winograd_seeds"):
        shared = sorted(set(getattr(extra, key)) & set(seeds))
        if shared:
            raise ValueError(f"extra_seeds.{key}: {shared[0]} is one of seeds already")
    for key, known, where in (
        ("variants", variants, "variants"),
        ("winograd_variants", winograd, "winograd.variants"),
    ):
        for name in getattr(extra, key):
            if name not in known:
                raise ValueError(f"extra_seeds.{key}: {name} is not one of {where}")


def seeded_stage(family: str, variant: str, seed: int, seeds: list[int]) -> str:
    """dvc.yaml's name for ``variant`` under ``seed``: ``train@v-1337``, ``train-extra@v-1340``.

    ``seeds`` is params ``seeds``: a seed not among them is one of ``extra_seeds``.
    """
    return f"{family}{'' if seed in seeds else EXTRA}@{variant}-{seed}"
