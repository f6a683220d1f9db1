"""A saved run measured as the ``evaluate`` stage measures it, from its model folder.

The ``evaluate@<variant>-<seed>`` stage and the sweeps' ``sweep-check@<study>-<seed>`` stage
both read a saved model, check it is the run they were asked for, and measure it with
:func:`attnlab.evaluation.evaluate_variant` (val/ppl and train/ppl on the whole splits, the
bits per byte, the parameter counts, and the extras its experiments list in the
catalogue, :mod:`attnlab.catalogue`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import torch

from attnlab.catalogue import experiments_of, measurements_of
from attnlab.data.tokens import read_tokens
from attnlab.errors import AttnlabError
from attnlab.evaluation.measurements import (
    ALONG_PROTOCOL,
    EvaluationInputs,
    evaluate_variant,
    measure_along,
)
from attnlab.metrics.bpb import token_byte_lengths
from attnlab.runs.along_weights import read_along
from attnlab.runs.model_folder import WEIGHTS, load_trained_model


class Settings(Protocol):
    """How a saved run is measured, as plain values (params ``evaluate`` has them all)."""

    device: str  # auto, cpu or cuda
    batch_size: int  # windows scored at once
    lengths: Sequence[int]  # E13's evaluation lengths
    stats_windows: int  # E09's validation windows


# The scores the record's reader averages: one not finite would be written as null and
# read as "not measured", a diverged model's run passing for a missing one.
SCORES = ("val/ppl", "train/ppl", "val/bpb", "train/bpb")


def evaluation_device(choice: str) -> torch.device:
    """Params ``evaluate.device`` as a device: ``auto`` is CUDA when present, else the CPU.

    Raises:
        AttnlabError: ``cuda`` on a machine where torch sees no GPU (rather than an error
            from loading the weights, which would blame the model folder).
    """
    if choice == "auto":
        choice = "cuda" if torch.cuda.is_available() else "cpu"
    elif choice == "cuda" and not torch.cuda.is_available():
        raise AttnlabError(
            "evaluate.device: cuda, but CUDA is not available on this machine (torch sees "
            "no GPU); set it to auto or cpu"
        )
    return torch.device(choice)


def evaluate_trained(
    folder: Path,
    variant: str,
    seed: int,
    evaluate: Settings,
    root_seed: int,
    tokens: Path,
    tokenizer: Path,
    experiments: Sequence[str] = (),
    along: Sequence[str] = (),
) -> dict[str, Any]:
    """Measure the run saved in ``folder``: the evaluate stage's whole record, timed.

    Args:
        folder: The trained run's folder (``model.pt`` and ``config.json``).
        variant: The variant name the run must have been trained as.
        seed: The seed it must have been trained with.
        evaluate: How to measure it (params ``evaluate``: its device, batch size, E13's
            lengths, E09's windows).
        root_seed: Params ``seed`` (E09's windows, E11's batch: the same for every run).
        tokens: The folder of ``train.parquet`` and ``val.parquet``.
        tokenizer: The tokenizer (the bytes of each token, for the bits per byte).
        experiments: Catalogue ids of other experiments whose rows read this run (its
            aliases', ``Params.experiments_reading``): their measurements run too, beside
            those of the experiments with ``variant`` among their rows.
        along: Measurements to take at every step the training kept (the catalogue's
            ``along`` of those experiments, :func:`attnlab.catalogue.along_of`).

    Returns:
        The run's seeds, :func:`evaluate_variant`'s measurements, with ``along``
        (:func:`~attnlab.evaluation.measurements.measure_along`) when asked, and ``wall_s``.

    Raises:
        AttnlabError: ``folder`` holds another variant or seed (a stale model), a weight
            that is not finite (as training refuses to save), a kept step's file is
            missing or differs from its manifest's SHA-256 (all checked before any
            measurement), or a score came out not finite.
    """
    device = evaluation_device(evaluate.device)
    trained = load_trained_model(folder, map_location=device)
    if trained.name != variant or trained.config.get("seed") != seed:
        raise AttnlabError(
            f"{folder} holds variant {trained.name!r} trained with seed "
            f"{trained.config.get('seed')}, not {variant!r} with seed {seed}: retrain it"
        )
    _refuse_non_finite(trained.model.state_dict(), Path(folder) / WEIGHTS)
    kept = read_along(folder, map_location=device) if along else []
    inputs = EvaluationInputs(
        model=trained.model,
        seed=root_seed,
        init_seed=trained.seeds["init_seed"],
        val_tokens=read_tokens(tokens / "val.parquet"),
        train_tokens=read_tokens(tokens / "train.parquet"),
        batch_size=evaluate.batch_size,
        lengths=tuple(evaluate.lengths),
        stats_windows=evaluate.stats_windows,
        train_batch_size=trained.train["batch_size"],
        token_bytes=token_byte_lengths(tokenizer, tokens / "val.parquet"),
    )
    extra = measurements_of((*experiments_of(variant), *experiments))
    began = time.perf_counter()
    record = {**trained.seeds, **evaluate_variant(inputs, extra)}
    if along:  # after the other measurements: they draw nothing new, and stay as they were
        record["along"] = measure_along(inputs, kept, along)
        record["protocol"]["along"] = ALONG_PROTOCOL
    record["wall_s"] = round(time.perf_counter() - began, 3)
    unmeasured = [key for key in record if key.startswith(SCORES) and not _finite(record[key])]
    if unmeasured:
        raise AttnlabError(
            f"{folder}: {', '.join(unmeasured)} not finite ({record[unmeasured[0]]}); "
            "nothing written: retrain the run"
        )
    return record


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


def _refuse_non_finite(state: Mapping[str, torch.Tensor], path: Path) -> None:
    """Refuse weights with a NaN or infinity: their every score would be one too.

    Raises:
        AttnlabError: naming ``path`` and the first tensor that is not finite.
    """
    for name, tensor in state.items():
        if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            raise AttnlabError(f"{path}: {name} holds a value that is not finite; retrain the run")
