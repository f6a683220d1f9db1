"""The library code whose behaviour shapes a result: the one list of it, per training stage.

Three things must agree on it: the ``deps`` of each training stage in ``dvc.yaml`` (so that
DVC reruns the stage when that code changes), a checkpoint's fingerprint (so that a run
never resumes state that other code wrote) and a study's definition (so that a study
starts afresh when its trials' code changes). All three read it here; a contract test
checks dvc.yaml against it. Paths are relative to the package folder (``src/attnlab``); a
folder means every module in it, so an edit anywhere in it counts.

Every record a stage writes states the code that wrote it (:func:`stamp`, under
:data:`CODE`): per part of the stage's list (:data:`RECORDED`), a digest of its files. The
report computes the same digests from the code in the checkout and leaves out, by name, a
record whose digests differ (:func:`changed_parts`), so a page never averages runs of two
code generations, and agrees with ``dvc status`` on what is stale: both read these lists.

Only the standard library is imported here: the training code reads this at import time.
"""

import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

PACKAGE = Path(__file__).parent

# What shapes a trained model's weights: the model (its architecture and its modules), the
# training loop (and the callbacks that follow one member of a seed group), the batches it
# draws (a pure function of seed and step) from the token files, and the files it leaves
# (the saved weights, and the kept steps that a resumed run continues). A checkpoint's
# fingerprint hashes this, in this order (and CURVE after it when the run draws the val/ppl
# curve), so a change to a list makes every existing checkpoint unusable (training then
# starts over).
WEIGHTS = (
    "architecture.py",
    "models",
    "training",
    "members.py",
    "data/batches.py",
    "data/tokens.py",
    "runs",
)

# What the train stage measures while it trains (the val/ppl curve, val/bpb) beside the
# weights: the metrics only, so an edit to the E09/E11 measurements of `evaluate` does
# not retrain the catalogue.
CURVE = ("data/bpe.py", "metrics")

# What winograd-train adds: its batches, and the held-out accuracy it scores along training
# as winograd-score scores.
WINOGRAD = (
    "catalogue",
    "winograd/accuracy_curve.py",
    "winograd/scoring.py",
    "winograd/sentence_batches.py",
    "winograd/task_files.py",
)

# What a run's records state beside its numbers: the fingerprint of its configuration,
# which the report compares with the params' (an edit changes every record's).
RECORD = ("config/fingerprint.py",)

# Each training stage's result-affecting library code, beside its own command module
# (``stages/<stage>.py``, which dvc.yaml lists too). A sweep's study definition hashes
# the sweep's list: a change to it starts the study afresh.
STAGES: dict[str, tuple[str, ...]] = {
    "train": WEIGHTS + CURVE + RECORD,
    "sweep": WEIGHTS + CURVE + ("sweeps",),
    "sweep-check": WEIGHTS + CURVE + ("evaluation", "sweeps/check.py") + RECORD,
    "winograd-train": WEIGHTS + WINOGRAD,
}


# What reads a trained Winograd model back and scores or maps it (winograd-score, -maps).
WINOGRAD_MODEL = (
    "catalogue",
    "winograd",
    "runs/model_folder.py",
    "runs/manifest.py",
    "models",
    "architecture.py",
)

# The stages whose records the report reads, each with its own command module first and
# then the library code its dvc.yaml entry declares (a contract test holds the two equal).
# An extra-seeds stage (``train-extra``...) runs its family's command and states its
# family's name. The download and bpe stages write no record the report reads.
RECORDED: dict[str, tuple[str, ...]] = {
    "tokenize": ("stages/tokenize.py", "data", "runs/manifest.py"),
    "probes": ("stages/probes.py", "probes", "models", "architecture.py"),
    "cost": ("stages/cost.py", "probes"),
    "train": ("stages/train.py", *STAGES["train"]),
    "evaluate": (
        "stages/evaluate.py",
        "evaluation",
        "metrics",
        "runs/model_folder.py",
        "runs/manifest.py",
        "runs/along_weights.py",
        "catalogue",
        "models",
        "architecture.py",
        "training/capacity.py",
        "data/batches.py",
        "data/tokens.py",
        "data/bpe.py",
        "config/fingerprint.py",
    ),
    "sweep": ("stages/sweep.py", *STAGES["sweep"]),
    "sweep-check": ("stages/sweep_check.py", *STAGES["sweep-check"]),
    "winograd-data": (
        "stages/winograd_data.py",
        "catalogue/winograd.py",
        "winograd/from_params.py",
        "winograd/sentences.py",
        "winograd/task_files.py",
    ),
    "winograd-train": ("stages/winograd_train.py", *STAGES["winograd-train"]),
    "winograd-score": ("stages/winograd_score.py", *WINOGRAD_MODEL),
    "winograd-maps": ("stages/winograd_maps.py", *WINOGRAD_MODEL),
}
# The stages whose records come from training (the report says "trained by other code").
TRAINED = frozenset(("train", "sweep", "sweep-check", "winograd-train"))
CODE = "code"  # the key of a record's code stamp


def files(parts: Iterable[str]) -> list[Path]:
    """The modules ``parts`` name under the package, in order, each folder's sorted.

    Args:
        parts: Paths relative to the package folder, of modules or of folders.
    """
    found: list[Path] = []
    for part in parts:
        path = PACKAGE / part
        found.extend(sorted(path.rglob("*.py")) if path.is_dir() else [path])
    return found


def digest(parts: Iterable[str]) -> str:
    """A SHA-256 of the modules ``parts`` name: each one's path (package-relative) and bytes."""
    hashed = hashlib.sha256()
    for file in files(parts):
        hashed.update(str(file.relative_to(PACKAGE)).encode())
        hashed.update(file.read_bytes())
    return hashed.hexdigest()


def code_digests(stage: str) -> dict[str, str]:
    """Per part of ``stage``'s :data:`RECORDED` list, a short digest of its code as it is now."""
    return {part: digest((part,))[:12] for part in RECORDED[stage]}


def stamp(stage: str) -> dict[str, Any]:
    """What a record of ``stage`` states of the code that wrote it (its :data:`CODE` value)."""
    return {"stage": stage, "parts": code_digests(stage)}


def changed_parts(
    record: Mapping[str, Any], current: Mapping[str, Mapping[str, str]]
) -> str | None:
    """Why ``record`` was not written by the code ``current`` gives, or None when it was.

    Args:
        record: A record as a stage wrote it.
        current: Per stage of :data:`RECORDED`, its :func:`code_digests` now.

    Returns:
        ``None``, or the reason in words: ``trained by other code (models/, training/
        changed)``, or that the record predates code stamps.
    """
    stated = record.get(CODE)
    if not isinstance(stated, Mapping) or stated.get("stage") not in current:
        return "written before records stated their code (by code older than this checkout)"
    stage = stated["stage"]
    parts = stated.get("parts", {})
    expected = current[stage]
    changed = [_shown(part) for part in expected if parts.get(part) != expected[part]]
    changed += [_shown(part) for part in parts if part not in expected]
    if not changed:
        return None
    verb = "trained" if stage in TRAINED else "measured"
    return f"{verb} by other code ({', '.join(changed)} changed)"


def _shown(part: str) -> str:
    return part if part.endswith(".py") else f"{part}/"
