"""The fan-out: the pipeline's independent stages run at once, each as DVC runs it alone.

``attnlab repro`` brings the catalogue up to date like ``dvc repro`` does, with the same
``dvc.lock`` entries and metrics, but several ``dvc repro --single-item`` children at a
time (:mod:`~attnlab.fanout.launcher`), in the order of DVC's own stage graph
(:mod:`~attnlab.fanout.plan`), with cores and GPUs shared out among them
(:mod:`~attnlab.fanout.resources`), optionally as a ``dvc exp`` experiment
(:mod:`~attnlab.fanout.experiment`).
"""

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from attnlab.fanout.experiment import (
    EXPERIMENT_VARIABLE,
    apply_params,
    experiment_name,
    save_experiment,
)
from attnlab.fanout.launcher import FanOut, FanOutResult
from attnlab.fanout.plan import StagePlan, prune, read_plan
from attnlab.fanout.resources import (
    Resources,
    driver_devices,
    plan_resources,
    usable_cores,
    visible_devices,
)

__all__ = [
    "FanOut",
    "FanOutResult",
    "Resources",
    "StagePlan",
    "plan_resources",
    "prune",
    "read_plan",
    "repro",
    "visible_devices",
]


def repro(
    root: Path,
    targets: Sequence[str] = (),
    *,
    jobs: int | None = None,
    per_device: int = 4,
    set_params: Sequence[str] = (),
    name: str | None = None,
    allow_missing: bool = False,
    out: TextIO = sys.stdout,
) -> FanOutResult:
    """Bring ``targets`` (default: the whole pipeline) up to date, several stages at once.

    Args:
        root: The DVC project.
        targets: Stages as ``dvc repro`` takes them; their upstream stages come too.
        jobs: Stages at once; None: one per core on a CPU, ``per_device`` per GPU.
        per_device: Stages that share one GPU.
        set_params: ``-S`` overrides; when given, the run is saved as a DVC experiment.
        name: The experiment's name (with ``set_params``; default: DVC's random style).
        allow_missing: Skip stages whose only change is data absent here, as ``dvc repro
            --allow-missing`` does (a fresh clone of the record has no models).
        out: Where the progress lines go.

    Raises:
        AttnlabError: bad arguments, an invalid override, or DVC cannot plan the run.
    """
    environ = dict(os.environ)
    resources = plan_resources(
        usable_cores(), visible_devices(environ, driver_devices()), jobs, per_device
    )
    experiment = None
    if set_params or name:
        apply_params(root, set_params)
        experiment = experiment_name(name)
        environ[EXPERIMENT_VARIABLE] = experiment
    plan = read_plan(root, targets, allow_missing=allow_missing)
    result = FanOut(root, plan, resources, environ, out, allow_missing).run()
    if experiment is not None and result.ok:
        save_experiment(root, experiment, plan.order or targets)
        print(f"saved experiment {experiment} (dvc exp show lists it)", file=out)
    return result
