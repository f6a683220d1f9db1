"""A fan-out with changed params, recorded as a DVC experiment that ``dvc exp show`` lists.

Serves quick passes and knob changes over the whole catalogue (``attnlab repro -S
budget.scale=0.01``). ``dvc exp run -S`` runs its stages one at a time; here the same
overrides are applied to the params files with DVC's own override code (the same grammar,
the same rejection of unknown keys, the same file written back), validated by attnlab's
loader before any stage starts, and after the fan-out the workspace is saved as an
experiment with ``dvc exp save``: the params, ``dvc.lock`` and metrics DVC committed.
"""

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from attnlab.errors import AttnlabError

# DVC names what it runs with this variable in `dvc exp run`; training records it (W&B
# run names, the model's config.json), so the fan-out's children get it too.
EXPERIMENT_VARIABLE = "DVC_EXP_NAME"


def experiment_name(requested: str | None) -> str:
    """``requested``, or a fresh name in DVC's own style (``adj-noun``)."""
    if requested:
        return requested
    from dvc.repo.experiments.utils import gen_random_name

    return gen_random_name()


def apply_params(root: Path, overrides: Sequence[str]) -> None:
    """Apply ``-S`` overrides (``key=value``, ``file:key=value``) as ``dvc exp run`` does.

    The params files are then loaded by attnlab's typed loader; an invalid result is put
    back to the original bytes and reported, before any stage runs. A key of a file beside
    params.yaml given without its file (``winograd.train.steps=500``) is refused with the
    spelling DVC needs (``winograd.yaml:winograd.train.steps=500``).

    Raises:
        AttnlabError: DVC rejects an override (an unknown key, bad syntax), or the
            changed params are invalid.
    """
    from dvc.exceptions import DvcException
    from dvc.utils.cli_parse import to_path_overrides
    from dvc.utils.hydra import apply_overrides

    from attnlab.config import load_params

    originals = {}
    try:
        for name, changes in to_path_overrides(overrides).items():
            _check_file_of(name, changes)
            path = root / name
            originals[path] = path.read_bytes()
            apply_overrides(path, changes)
        load_params(root / "params.yaml")
    except (DvcException, AttnlabError) as err:
        for path, data in originals.items():
            path.write_bytes(data)
        raise AttnlabError(f"-S {' '.join(overrides)}: {err}") from None


def _check_file_of(name: str, changes: Sequence[str]) -> None:
    """Refuse a key given to params.yaml that a file beside it holds, naming that file."""
    from attnlab.config.files import DEFAULT_FILE, file_of

    if name != DEFAULT_FILE:
        return
    for change in changes:
        key = change.lstrip("+~").partition("=")[0]
        home = file_of(key.partition(".")[0])
        if home != DEFAULT_FILE:
            raise AttnlabError(f"{key} is a key of {home}: write -S {home}:{change}")


def save_experiment(root: Path, name: str, stages: Sequence[str]) -> None:
    """Record the workspace as experiment ``name`` (``dvc exp save``).

    Args:
        root: The DVC project.
        name: The experiment's name (an existing one is replaced).
        stages: The stages whose outputs DVC caches; without them ``dvc exp save`` caches
            every stage's and fails on any output the workspace lacks (a partial run).

    Raises:
        AttnlabError: DVC could not save it (its message is included).
    """
    done = subprocess.run(
        [sys.executable, "-m", "dvc", "exp", "save", "--force", "--name", name, *stages],
        cwd=root,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise AttnlabError(f"dvc exp save --name {name} failed:\n{done.stdout}{done.stderr}")
