"""What a training run leaves behind, and how later stages read it back.

A trained model is a folder of three files: ``model.pt``, the model's ``state_dict``
(loaded with ``weights_only=True``: plain tensors, no pickled code), ``config.json``,
the resolved configuration it was trained with: variant, model config, recipe, budget,
steps, the run's seed with its init and data seeds, hardware, fingerprint and git
revision, and ``manifest.json``, the SHA-256 of each of the two, written when training
ends. Offline W&B loses its config when a run is killed (PITFALLS 4), so this file,
not W&B, is where the hyperparameters live. A flipped bit in the weights still loads
(to slightly different numbers, or NaN): :func:`load_trained_model` checks both files
against the manifest first, as :func:`read_along` checks the kept steps.

Every file is written all-or-nothing (:mod:`attnlab.files`): a full disk is an error
naming the file, and never leaves half a file behind.

Evaluation, the probes and the Winograd stages (docs/catalogue.md E02-E18) start from
:func:`load_trained_model`. A run that an experiment measures along training (E09, E11)
also leaves ``along/``: the weights at its kept steps (``step-NNNNNN.pt``, written by
:class:`attnlab.training.along.AlongTraining`) and ``manifest.json``, each file's step and
SHA-256, which :func:`read_along` checks before anything is measured.
"""

import csv
import hashlib
import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from attnlab.config.variants import TrainParams, Variant
from attnlab.errors import AttnlabError
from attnlab.files import write_atomically
from attnlab.models import LanguageModel, ModelConfig
from attnlab.paths import metrics_text, read_metrics, write_metrics

WEIGHTS = "model.pt"
CONFIG = "config.json"
ALONG = "along"  # the folder of the kept steps, in the resume folder and the model folder
MANIFEST = "manifest.json"


@dataclass(frozen=True)
class TrainedModel:
    """A trained model with the variant it was trained as and the full run description."""

    model: LanguageModel
    variant: Variant
    config: dict[str, Any]

    @property
    def seeds(self) -> dict[str, int]:
        """The run's ``seed`` and the ``init_seed`` and ``data_seed`` it trained with."""
        return {key: self.config[key] for key in ("seed", "init_seed", "data_seed")}


def save_trained_model(model: LanguageModel, config: dict[str, Any], folder: Path) -> None:
    """Write ``model.pt``, ``config.json`` and their ``manifest.json`` into ``folder``.

    The folder is created if needed.

    ``config`` must hold ``variant``, ``model`` (the ModelConfig's fields) and ``train``,
    as :meth:`attnlab.training.TrainJob.config` returns them.
    """
    folder = Path(folder)
    files = {WEIGHTS: weights_bytes(model), CONFIG: metrics_text(config).encode("utf-8")}
    for name, data in files.items():
        write_atomically(folder / name, data)
    # Last: a folder that a failed write left half done has no manifest, and is refused.
    listed = [{"file": name, "sha256": _sha256(data)} for name, data in files.items()]
    write_metrics(folder / MANIFEST, {"files": listed})


def weights_bytes(model: torch.nn.Module) -> bytes:
    """The model's ``state_dict`` on the CPU, serialised: the bytes of a ``model.pt``."""
    buffer = io.BytesIO()
    torch.save({key: value.detach().cpu() for key, value in model.state_dict().items()}, buffer)
    return buffer.getvalue()


def load_trained_model(folder: Path, map_location: str | torch.device = "cpu") -> TrainedModel:
    """Rebuild a trained model from its folder, in eval mode.

    Both files are checked against the folder's manifest before either is read.

    Raises:
        AttnlabError: the folder lacks a file, a file's SHA-256 differs from the
            manifest's (naming the file), or the weights do not fit the config.
    """
    folder = Path(folder)
    manifest = folder / MANIFEST
    if not manifest.is_file():
        raise AttnlabError(
            f"{folder}: not a trained model folder (no {MANIFEST}, the SHA-256 of its "
            "files); retrain the run"
        )
    hashes = {entry["file"]: entry["sha256"] for entry in read_metrics(manifest)["files"]}
    config_bytes, weights = (
        _read_listed(folder / name, hashes.get(name), manifest) for name in (CONFIG, WEIGHTS)
    )
    try:
        config = json.loads(config_bytes)
        state = torch.load(io.BytesIO(weights), map_location=map_location, weights_only=True)
    except (ValueError, RuntimeError) as err:
        raise AttnlabError(f"{folder}: not a trained model folder ({err})") from None
    variant = Variant(
        name=config["variant"],
        model=ModelConfig(**config["model"]),
        train=TrainParams.model_validate(config["train"]),
    )
    model = LanguageModel(variant.model)
    try:
        model.load_state_dict(state)
    except RuntimeError as err:
        raise AttnlabError(f"{folder / WEIGHTS}: does not fit {folder / CONFIG}: {err}") from None
    return TrainedModel(model=model.to(map_location).eval(), variant=variant, config=config)


def write_curve(path: Path, points: list[tuple[int, float]], column: str = "loss") -> None:
    """Write a curve as a ``step,<column>`` CSV (a DVC plots file): the loss by default.

    Values are written with ``repr``: the shortest text that reads back as the same float,
    so two curves compare bit for bit through the file.
    """
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow(["step", column])
    writer.writerows((step, repr(value)) for step, value in points)
    write_atomically(Path(path), text.getvalue().encode("utf-8"))


def read_curve(path: Path, column: str = "loss") -> list[tuple[int, float]]:
    """Read a curve written by :func:`write_curve`."""
    with open(path, newline="", encoding="utf-8") as handle:
        return [(int(row["step"]), float(row[column])) for row in csv.DictReader(handle)]


def final_loss(points: list[tuple[int, float]], fraction: float = 0.05) -> tuple[float, int]:
    """The mean loss of the last ``fraction`` of steps (at least one), and how many.

    One batch's loss is noisy; the last 5 % of the run (150 of P0's 3000 steps) is a
    stable figure of where training ended.
    """
    if not points:
        return math.nan, 0
    window = max(1, round(len(points) * fraction))
    tail = [loss for _, loss in points[-window:]]
    return sum(tail) / window, window


def step_file(step: int) -> str:
    """The name of step ``step``'s kept weights: ``step-000004.pt``."""
    return f"step-{step:06d}.pt"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_listed(path: Path, sha256: str | None, manifest: Path) -> bytes:
    """The bytes of ``path``, once their SHA-256 is the one ``manifest`` lists for it.

    Raises:
        AttnlabError: the file is missing or unlisted, or its bytes differ (naming it).
    """
    if sha256 is None:
        raise AttnlabError(f"{path}: not listed in {manifest}; retrain the run")
    try:
        data = path.read_bytes()
    except OSError:
        raise AttnlabError(f"{path}: missing (listed in {manifest})") from None
    if _sha256(data) != sha256:
        raise AttnlabError(
            f"{path}: its SHA-256 differs from the one in {manifest}; retrain the run to restore it"
        )
    return data


def keep_along(written: Path, model_folder: Path, steps: Sequence[int]) -> None:
    """Copy the files :class:`AlongTraining` wrote into ``model_folder/along`` with a manifest.

    Raises:
        AttnlabError: a step's file is missing from ``written`` (naming it).
    """
    entries = []
    for step in steps:
        source = Path(written) / step_file(step)
        try:
            data = source.read_bytes()
        except OSError as err:
            raise AttnlabError(
                f"{source}: the weights of step {step} were not kept ({err})"
            ) from None
        write_atomically(Path(model_folder) / ALONG / step_file(step), data)
        entries.append({"step": step, "file": step_file(step), "sha256": _sha256(data)})
    write_metrics(Path(model_folder) / ALONG / MANIFEST, {"steps": entries})


@dataclass(frozen=True)
class AlongWeights:
    """One kept step: its global step and its ``state_dict``."""

    step: int
    state: dict[str, torch.Tensor]


def read_along(model_folder: Path, map_location: str | torch.device = "cpu") -> list[AlongWeights]:
    """Every kept step of a trained run, in step order, each file checked against the manifest.

    Every file is hashed before any is loaded, so a mismatch is refused before a
    measurement starts.

    Raises:
        AttnlabError: the manifest or a file it lists is missing, or a file's SHA-256
            differs from the manifest's (the message names the file).
    """
    folder = Path(model_folder) / ALONG
    manifest = folder / MANIFEST
    payloads = [
        (int(entry["step"]), _read_listed(folder / entry["file"], entry["sha256"], manifest))
        for entry in read_metrics(manifest)["steps"]
    ]
    return [
        AlongWeights(
            step, torch.load(io.BytesIO(data), map_location=map_location, weights_only=True)
        )
        for step, data in payloads
    ]
