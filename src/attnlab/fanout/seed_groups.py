"""Which ready stages start together: the seeds of one variant become a seed group.

Every (variant, seed) stays its own DVC stage, ``<family>@<variant>-<seed>``: plain ``dvc
repro`` runs each alone, and adding a seed adds only its stages. The fan-out, though, may
start the ready stages of one family and variant as one process
(:mod:`~attnlab.fanout.group_stage`), which runs them and then records each stage in
``dvc.lock`` as DVC would, with one read of DVC's graph and one write of the lock file
for them all (seconds each on the catalogue's). The train stages of a group also train
together, which saves a process's fixed cost per run (imports, Lightning's set-up, the
data, W&B) and, on a GPU, fills the device with several models' steps.

A group uses one of the fan-out's places. When fewer units of work are ready than places
are free, the largest groups are split so that no place idles (three seeds on two cores:
a group of two beside a single run), since a process of one thread per core out-trains
one of several threads (PERFORMANCE.md).

Training stopped part-way (by a time limit, a signal) continues only in the unit it began
in, whose seeds and their order name its resume folder. So a group's seeds are in seed
order however the plan lists them, and a unit with a resume point
(:mod:`~attnlab.fanout.resume_points`) starts as it was, whole: a group is not split, a
lone seed is not joined to others. Pure functions: tested without DVC.
"""

import re
from collections.abc import Sequence

# A stage of a (variant or study, seed) matrix: train, evaluate, winograd-*, sweep-check.
SEEDED_STAGE = re.compile(r"^(?P<family>[\w-]+)@(?P<variant>.+)-(?P<seed>\d+)$")
TRAIN_STAGE = re.compile(r"^train(-extra)?@(?P<variant>.+)-(?P<seed>\d+)$")  # extra_seeds too


Resumable = Sequence[tuple[str, tuple[int, ...]]]  # (variant, seeds): resume_points


def launch_units(
    ready: Sequence[str], free: int, group: bool = True, resumable: Resumable = ()
) -> list[tuple[str, ...]]:
    """The children to start now: at most ``free`` tuples of stages, in plan order.

    A group's stages are in seed order, so the same seeds make the same group (and find
    the same resume folder) however the plan listed them.

    Args:
        ready: Stages whose upstream stages have finished, in plan order.
        free: Places free for new children.
        group: Start the ready stages of one family and variant as one seed group;
            False starts every stage alone.
        resumable: The units of training with a resume point, newest first
            (:func:`~attnlab.fanout.resume_points.resumable_units`): the ready train
            stages of one start as that unit, in its order (a lone seed alone), are
            never split or joined to others, and start before every other unit: work
            stopped part-way finishes before new work begins.
    """
    units: list[list[str]] = []
    by_variant: dict[tuple[str, str], list[str]] = {}
    for name in ready:
        match = SEEDED_STAGE.match(name)
        if not group or match is None:
            units.append([name])
            continue
        key = (match["family"], match["variant"])
        if key in by_variant:
            by_variant[key].append(name)
        else:
            by_variant[key] = [name]
            units.append(by_variant[key])
    pieces = [piece for unit in units for piece in _pieces(unit, resumable)]
    pieces.sort(key=lambda piece: not piece[1])  # work stopped part-way first (stable)
    kept = pieces[: max(free, 0)]
    while len(kept) < free:  # a free place would idle: split the largest group
        largest = max((unit for unit, whole in kept if not whole), key=len, default=[])
        if len(largest) < 2:
            break
        at = next(i for i, (unit, _) in enumerate(kept) if unit is largest)
        half = (len(largest) + 1) // 2
        kept[at : at + 1] = [(largest[:half], False), (largest[half:], False)]
    return [tuple(unit) for unit, _ in kept]


def _pieces(unit: list[str], resumable: Resumable) -> list[tuple[list[str], bool]]:
    """``unit`` as it starts, each piece with whether it must stay whole.

    A seeded unit's resumable units come first, whole and in their order; its other
    stages follow in seed order.
    """
    if SEEDED_STAGE.match(unit[0]) is None:
        return [(unit, False)]
    by_seed = {stage_seed(name): name for name in unit}
    pieces = []
    train = TRAIN_STAGE.match(unit[0])
    if train is not None:
        for variant, seeds in resumable:
            if variant == train["variant"] and all(seed in by_seed for seed in seeds):
                pieces.append(([by_seed.pop(seed) for seed in seeds], True))
    rest = [by_seed[seed] for seed in sorted(by_seed)]
    return pieces + ([(rest, False)] if rest else [])


def resumes_whole(unit: Sequence[str], resumable: Resumable) -> bool:
    """Whether ``unit`` is train stages with a resume point, as one unit in its order.

    Such a unit starts whole or not at all: part of it would train from step 0.
    """
    train = TRAIN_STAGE.match(unit[0]) if unit else None
    if train is None:
        return False
    return (train["variant"], tuple(stage_seed(name) for name in unit)) in resumable


def stage_seed(stage: str) -> int:
    """The seed of a seeded stage's name: ``train@depth-2-1339`` -> 1339."""
    return int(SEEDED_STAGE.match(stage)["seed"])  # type: ignore[index]


def runs_as_group(stages: Sequence[str], group: bool = True) -> bool:
    """Whether a unit of :func:`launch_units` runs through the seed-group runner.

    Every unit of seeded stages does, a lone seed too, when grouping is on: the runner
    records a stage as ``dvc repro --single-item`` would, for a fraction of its cost (one
    write of a ``dvc.lock`` entry instead of DVC's rewrite of the whole file).
    """
    return group and all(SEEDED_STAGE.match(name) for name in stages)
