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
one of several threads (PERFORMANCE.md). Pure functions: tested without DVC.
"""

import re
from collections.abc import Sequence

# A stage of a (variant or study, seed) matrix: train, evaluate, winograd-*, sweep-check.
SEEDED_STAGE = re.compile(r"^(?P<family>[\w-]+)@(?P<variant>.+)-(?P<seed>\d+)$")
TRAIN_STAGE = re.compile(r"^train(-extra)?@(?P<variant>.+)-(?P<seed>\d+)$")  # extra_seeds too


def launch_units(ready: Sequence[str], free: int, group: bool = True) -> list[tuple[str, ...]]:
    """The children to start now: at most ``free`` tuples of stages, in plan order.

    Args:
        ready: Stages whose upstream stages have finished, in plan order.
        free: Places free for new children.
        group: Start the ready stages of one family and variant as one seed group;
            False starts every stage alone.
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
    units = units[: max(free, 0)]
    while len(units) < free:  # a free place would idle: split the largest group
        largest = max(units, key=len, default=[])
        if len(largest) < 2:
            break
        at = units.index(largest)
        half = (len(largest) + 1) // 2
        units[at : at + 1] = [largest[:half], largest[half:]]
    return [tuple(unit) for unit in units]


def runs_as_group(stages: Sequence[str], group: bool = True) -> bool:
    """Whether a unit of :func:`launch_units` runs through the seed-group runner.

    Every unit of seeded stages does, a lone seed too, when grouping is on: the runner
    records a stage as ``dvc repro --single-item`` would, for a fraction of its cost (one
    write of a ``dvc.lock`` entry instead of DVC's rewrite of the whole file).
    """
    return group and all(SEEDED_STAGE.match(name) for name in stages)
