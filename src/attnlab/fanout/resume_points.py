"""The runs whose training state waits in the run root, so that each resumes as it began.

A unit of training (one seed, or a seed group in one process) keeps one resume folder,
named after its seeds in their order (:func:`attnlab.training.job.checkpoint_dir`:
``<variant>-seed-1337-<digest>``, ``<variant>-seeds-1339-1338-<digest>``). Stopped by a
time limit or a signal, it continues from its last step only when the same seeds start
again as one unit, in that order: any other grouping of them trains from step 0. A
finished run removes its resume folder, so every unit found here has steps to save, and
the fan-out starts these units before new work (:mod:`~attnlab.fanout.seed_groups`),
each costed by its steps left (:func:`resume_steps`).

A folder is matched by its name alone, not by the configuration digest in it: after a
change of params or code, clear the run root's ``checkpoints/`` of the old runs, or the
forecast counts their steps as done (the runs themselves refuse a foreign checkpoint).
"""

import re
from pathlib import Path

# checkpoint_dir's folder names: a lone seed's and a seed group's.
RESUME_FOLDER = re.compile(r"^(?P<variant>.+)-seeds?-(?P<seeds>\d+(?:-\d+)*)-[0-9a-f]{16}$")


def _resume_folders(run_root: Path) -> list[tuple[Path, str, tuple[int, ...]]]:
    """``(state file, variant, seeds in their order)`` of each resume point, newest first."""
    found = []
    for state in (run_root / "checkpoints").glob("*/last.ckpt"):
        match = RESUME_FOLDER.match(state.parent.name)
        if match is not None:
            seeds = tuple(int(seed) for seed in match["seeds"].split("-"))
            found.append((state.stat().st_mtime, state, match["variant"], seeds))
    return [(state, variant, seeds) for _, state, variant, seeds in sorted(found, reverse=True)]


def resumable_units(run_root: Path) -> list[tuple[str, tuple[int, ...]]]:
    """``(variant, seeds in their order)`` of each unit with a resume point, newest first.

    Newest first: where two units share a seed (the same seeds once in another order),
    the one trained last is the one to continue.
    """
    return [(variant, seeds) for _, variant, seeds in _resume_folders(run_root)]


def resume_steps(run_root: Path) -> dict[tuple[str, int], int]:
    """``(variant, seed)`` -> the steps its newest resume point holds (the unit resumed first).

    An unreadable state file counts as no steps: the run itself reports it when it starts.
    """
    from attnlab.training.checkpoints import CheckpointError, load_checkpoint_file  # torch

    steps: dict[tuple[str, int], int] = {}
    for state, variant, seeds in _resume_folders(run_root):
        try:
            step = int(load_checkpoint_file(state)["global_step"])
        except (CheckpointError, KeyError):
            continue
        for seed in seeds:
            steps.setdefault((variant, seed), step)
    return steps
