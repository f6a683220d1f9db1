"""A trained model on disk: its folder, written once training ends and read by every later stage.

A trained model is a folder of three files: ``model.pt``, the model's ``state_dict``
(loaded with ``weights_only=True``: plain tensors, no pickled code), ``config.json``,
the resolved configuration it was trained with: variant, model config, recipe, budget,
steps, the run's seed with its init and data seeds, hardware, fingerprint and git
revision, and ``manifest.json``, the SHA-256 of each of the two, written when training
ends. Offline W&B loses its config when a run is killed (PITFALLS 4), so this file,
not W&B, is where the hyperparameters live. A flipped bit in the weights still loads
(to slightly different numbers, or NaN): :func:`load_trained_model` checks both files
against the manifest first, as :func:`~attnlab.runs.along_weights.read_along` checks the
kept steps.

Every file is written all-or-nothing (:mod:`attnlab.files`): a full disk is an error
naming the file, and never leaves half a file behind.

Evaluation, the probes and the Winograd stages (docs/catalogue.md E02-E18) start from
:func:`load_trained_model`.
"""

import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from attnlab.errors import AttnlabError
from attnlab.models import LanguageModel, ModelConfig
from attnlab.paths import metrics_text
from attnlab.runs.manifest import MANIFEST, listed_hashes, read_listed, write_listed

WEIGHTS = "model.pt"
CONFIG = "config.json"


@dataclass(frozen=True)
class TrainedModel:
    """A trained model and the full run description it was trained with (``config.json``).

    The model carries its architecture (``model.config``); the rest are the plain values
    the run recorded, read by name.
    """

    model: LanguageModel
    config: dict[str, Any]

    @property
    def name(self) -> str:
        """The variant it was trained as."""
        return self.config["variant"]

    @property
    def train(self) -> dict[str, Any]:
        """The training recipe it was trained with (params ``train``, resolved)."""
        return self.config["train"]

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
    files = {WEIGHTS: weights_bytes(model), CONFIG: metrics_text(config).encode("utf-8")}
    write_listed(Path(folder), files)


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
    hashes = listed_hashes(folder, "not a trained model folder: retrain the run")
    config_bytes, weights = (
        read_listed(folder / name, hashes.get(name), folder / MANIFEST)
        for name in (CONFIG, WEIGHTS)
    )
    try:
        config = json.loads(config_bytes)
        state = torch.load(io.BytesIO(weights), map_location=map_location, weights_only=True)
    except (ValueError, RuntimeError) as err:
        raise AttnlabError(f"{folder}: not a trained model folder ({err})") from None
    model = LanguageModel(ModelConfig(**config["model"]))
    try:
        model.load_state_dict(state)
    except RuntimeError as err:
        raise AttnlabError(f"{folder / WEIGHTS}: does not fit {folder / CONFIG}: {err}") from None
    return TrainedModel(model=model.to(map_location).eval(), config=config)
