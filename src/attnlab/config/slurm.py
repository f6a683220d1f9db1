"""How ``attnlab repro --executor slurm`` asks SLURM for each job: ``runtime.slurm``.

Where and with what a stage runs on a cluster changes no result (the stages run the same
commands, resume bit for bit after a requeue), so these knobs sit in ``runtime``, which
no stage declares. The fan-out reads them (:mod:`attnlab.fanout.slurm`); nothing else does.
"""

from typing import Annotated

from pydantic import Field

from attnlab.config.base import Section

# sbatch's --mem: a whole number with an optional unit (K, M, G or T; megabytes without).
MEMORY = r"^[1-9][0-9]*[KMGT]?$"


class SlurmParams(Section):
    """Each job's request and the cluster's names, for ``sbatch``.

    Attributes:
        partition: ``--partition``; None: the cluster's default.
        account: ``--account``; None: the user's default.
        cpus_per_job: ``--cpus-per-task``, and the torch threads of the job's stages.
        mem_per_job: ``--mem`` (e.g. ``4G``).
        gres: ``--gres`` of a job that trains or measures a model (e.g. ``gpu:1``); None
            on a CPU cluster. The data stages and the report never ask for one.
        time_margin: A job's ``--time`` is its stages' forecast times this ...
        min_time_minutes: ... and at least this many minutes (start-up, a slow node).
        max_time_minutes: At most this (a partition's limit); a longer job is stopped at
            its limit with its checkpoint and requeued, and continues. None: no cap.
        signal_before_s: SLURM warns a job this long before its limit (``--signal``):
            time to finish the step, save the checkpoint and requeue.
        extra_options: Any other ``sbatch`` options, as written on its command line.
    """

    partition: str | None = None
    account: str | None = None
    cpus_per_job: Annotated[int, Field(ge=1)] = 1
    mem_per_job: Annotated[str, Field(pattern=MEMORY)] = "4G"
    gres: Annotated[str, Field(min_length=1)] | None = None
    time_margin: Annotated[float, Field(ge=1.0, le=100.0)] = 2.0
    min_time_minutes: Annotated[int, Field(ge=1)] = 10
    max_time_minutes: Annotated[int, Field(ge=1)] | None = None
    signal_before_s: Annotated[int, Field(ge=10, le=3600)] = 120
    extra_options: list[str] = Field(default_factory=list)
