"""The catalogue's protocols checked against params: each variant is its row plus the overrides.

A protocol of the experiment catalogue (:mod:`attnlab.catalogue`) maps every row of its
experiment to a trained variant of params.yaml. The catalogue alone cannot tell whether
that variant is really the row under the protocol's choice; this check compares the two
*resolved* variants (every model and train field after the defaults are applied), so a
default, a row or a protocol variant edited on its own cannot drift from what the
catalogue says the protocol changes.
"""

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from attnlab.catalogue import Experiment
from attnlab.config.variants import Variant


def _fields(variant: Variant) -> dict[str, Any]:
    """Every resolved field of ``variant`` as ``section.key`` (``model.dropout``)."""
    return {
        **{f"model.{k}": v for k, v in dataclasses.asdict(variant.model).items()},
        **{f"train.{k}": v for k, v in variant.train.model_dump().items()},
    }


def _differences(row: Variant, variant: Variant) -> dict[str, Any]:
    """The fields where ``variant`` differs from ``row``, with ``variant``'s values."""
    mine, theirs = _fields(row), _fields(variant)
    return {key: value for key, value in theirs.items() if mine.get(key) != value}


def check_protocols(
    experiments: Mapping[str, Experiment],
    resolve: Callable[[str], Variant | None],
    aliases: Mapping[str, str],
    require_all: bool = True,
) -> None:
    """Every protocol variant exists and differs from its row by exactly its overrides.

    Args:
        experiments: the catalogue's experiments by id.
        resolve: a variant name (of ``variants`` or ``winograd.variants``) to its resolved
            variant; ``None`` when params has no such variant.
        aliases: params ``aliases``: a row that is an alias is compared as its variant.
        require_all: False (params as loaded) skips a row or protocol variant params does
            not list: params cut to a few variants train none of the others, and the
            report says "not run"; the tests check the committed params in full.

    Raises:
        ValueError: naming ``experiments.<id>.protocols.<name>.rows.<row>``, the variant
            and every field that differs other than the protocol says.
    """
    for key, entry in experiments.items():
        for name, protocol in entry.protocols.items():
            expected = protocol.overrides.flat()
            for row, variant_name in protocol.rows.items():
                where = f"experiments.{key}.protocols.{name}.rows.{row}"
                row_variant = resolve(aliases.get(row, row))
                variant = resolve(variant_name)
                if (row_variant is None or variant is None) and not require_all:
                    continue
                if row_variant is None or variant is None:
                    missing = variant_name if variant is None else aliases.get(row, row)
                    raise ValueError(f"{where}: params.yaml has no variant {missing}")
                # The variant must be the row with the overrides applied. Where a default
                # already has the override's value (model.dropout 0.1 everywhere), the two
                # coincide there, and that is no drift.
                if _fields(variant) != {**_fields(row_variant), **expected}:
                    found = _differences(row_variant, variant)
                    shown = ", ".join(f"{k}={v!r}" for k, v in found.items()) or "nothing"
                    raise ValueError(
                        f"{where}: {variant_name} differs from {row} by {shown}, not by "
                        f"exactly the protocol's overrides "
                        f"({', '.join(f'{k}={v!r}' for k, v in expected.items())})"
                    )
