"""The library code whose behaviour shapes a result: the one list of it, per training stage.

Three things must agree on it: the ``deps`` of each training stage in ``dvc.yaml`` (so that
DVC reruns the stage when that code changes), a checkpoint's fingerprint (so that a run
never resumes state that other code wrote) and a study's definition (so that a study
starts afresh when its trials' code changes). All three read it here; a contract test
checks dvc.yaml against it. Paths are relative to the package folder (``src/attnlab``); a
folder means every module in it, so an edit anywhere in it counts.

Only the standard library is imported here: the training code reads this at import time.
"""

from collections.abc import Iterable
from pathlib import Path

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
