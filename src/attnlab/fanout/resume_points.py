"""The runs whose training state waits in the run root, so that each resumes as it began.

A unit of training (one seed, or a seed group in one process) keeps one resume folder,
named after its seeds in their order (:func:`attnlab.training.job.checkpoint_dir`:
``<variant>-seed-1337-<digest>``, ``<variant>-seeds-1339-1338-<digest>``). Stopped by a
time limit or a signal, it continues from its last step only when the same seeds start
again as one unit, in that order: any other grouping of them trains from step 0. A
finished run removes its resume folder, so every unit found here has steps to save.
"""

import re
from pathlib import Path

# checkpoint_dir's folder names: a lone seed's and a seed group's.
RESUME_FOLDER = re.compile(r"^(?P<variant>.+)-seeds?-(?P<seeds>\d+(?:-\d+)*)-[0-9a-f]{16}$")


def resumable_units(run_root: Path) -> list[tuple[str, tuple[int, ...]]]:
    """``(variant, seeds in their order)`` of each unit with a resume point, newest first.

    Newest first: where two units share a seed (the same seeds once in another order),
    the one trained last is the one to continue.
    """
    found = []
    for state in (run_root / "checkpoints").glob("*/last.ckpt"):
        match = RESUME_FOLDER.match(state.parent.name)
        if match is not None:
            seeds = tuple(int(seed) for seed in match["seeds"].split("-"))
            found.append((state.stat().st_mtime, match["variant"], seeds))
    return [(variant, seeds) for _, variant, seeds in sorted(found, reverse=True)]
