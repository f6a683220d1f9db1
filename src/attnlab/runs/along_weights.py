"""The weights a run kept along training, in its model folder (E09, E11 of docs/catalogue.md).

A run that an experiment measures along training also leaves ``along/``: the weights at
its kept steps (``step-NNNNNN.pt``, written during the fit by
:class:`attnlab.training.along_steps.AlongTraining`) and ``manifest.json``, each file's
step and SHA-256, which :func:`read_along` checks before anything is measured.
"""

import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from attnlab.errors import AttnlabError
from attnlab.files import write_atomically
from attnlab.paths import read_metrics, write_metrics
from attnlab.runs.manifest import MANIFEST, read_listed, sha256_of

ALONG = "along"  # the folder of the kept steps, in the resume folder and the model folder


def step_file(step: int) -> str:
    """The name of step ``step``'s kept weights: ``step-000004.pt``."""
    return f"step-{step:06d}.pt"


def keep_along(written: Path, model_folder: Path, steps: Sequence[int]) -> None:
    """Copy the kept steps' files from ``written`` into ``model_folder/along``, with a manifest.

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
        entries.append({"step": step, "file": step_file(step), "sha256": sha256_of(data)})
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
        (int(entry["step"]), read_listed(folder / entry["file"], entry["sha256"], manifest))
        for entry in read_metrics(manifest)["steps"]
    ]
    return [
        AlongWeights(
            step, torch.load(io.BytesIO(data), map_location=map_location, weights_only=True)
        )
        for step, data in payloads
    ]
