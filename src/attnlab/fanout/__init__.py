"""The fan-out: the pipeline's independent stages run at once, each as DVC runs it alone.

``attnlab repro`` brings the catalogue up to date like ``dvc repro`` does, with the same
``dvc.lock`` entries and metrics, but several ``dvc repro --single-item`` children at a
time (:mod:`~attnlab.fanout.launcher`), in the order of DVC's own stage graph
(:mod:`~attnlab.fanout.plan`), with cores and GPUs shared out among them
(:mod:`~attnlab.fanout.resources`; on GPUs optionally under NVIDIA's MPS,
:mod:`~attnlab.fanout.mps`), optionally as a ``dvc exp`` experiment
(:mod:`~attnlab.fanout.experiment`), on this machine or as SLURM jobs
(:mod:`~attnlab.fanout.slurm`). By default it starts from the record: absent inputs
are rebuilt, then only what DVC finds stale runs (:mod:`~attnlab.fanout.phases`); the plan
comes with its predicted time (:mod:`~attnlab.fanout.forecast`), and the run ends with
the one command that uploads its offline W&B runs (:mod:`~attnlab.fanout.wandb_runs`).
Work predicted to be long starts only when asked: otherwise the report is rendered from
what is current, and what is stale, why (:mod:`~attnlab.fanout.stale`) and the commands
that continue are printed; ``--time-limit`` runs what fits in a slice of compute
(:mod:`~attnlab.fanout.time_limit`).
"""

import contextlib
import dataclasses
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Literal, TextIO

from attnlab import mkl_avx512
from attnlab.errors import AttnlabError
from attnlab.fanout.children import Child
from attnlab.fanout.costs import RecordedCosts, catalogue_costs
from attnlab.fanout.experiment import (
    EXPERIMENT_VARIABLE,
    ParamsChange,
    apply_params,
    experiment_name,
    save_experiment,
)
from attnlab.fanout.forecast import LONG_S, Forecast, clock, forecast
from attnlab.fanout.launcher import LOG_FOLDER, FanOut, FanOutResult
from attnlab.fanout.mps import CONTROL, MpsMode, decide, mps_daemon
from attnlab.fanout.phases import VIEWS, first_plan, merged, with_views
from attnlab.fanout.plan import StagePlan, prune, read_plan
from attnlab.fanout.resources import (
    Resources,
    driver_devices,
    plan_resources,
    usable_cores,
    visible_devices,
)
from attnlab.fanout.resume_points import resume_steps
from attnlab.fanout.seed_groups import SEEDED_STAGE
from attnlab.fanout.slurm import SlurmExecutor, settings_of
from attnlab.fanout.stale import stale_summary
from attnlab.fanout.time_limit import TimeLimit, parse_duration
from attnlab.fanout.wandb_runs import offline_runs, sync_line
from attnlab.training.job import run_root_from_env

Executor = Literal["local", "slurm"]
SLURM_JOBS = 500  # jobs in the queue at once by default: the scheduler decides what runs

__all__ = [
    "FanOut",
    "FanOutResult",
    "Resources",
    "StagePlan",
    "parse_duration",
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
    allow_missing: bool = True,
    seed_groups: bool = True,
    mps: MpsMode = "off",
    executor: Executor = "local",
    time_limit: float | None = None,
    confirm: Callable[[], bool] | None = None,
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
        allow_missing: Start from the record: rebuild the absent inputs, then skip stages
            whose only change is data absent here, as ``dvc repro --allow-missing`` does (a
            fresh clone of the record has no models). False: run every stage whose outputs
            are absent, as plain ``dvc repro`` does.
        seed_groups: Start the ready stages of one family and variant (its seeds) as one
            seed group (:mod:`~attnlab.fanout.seed_groups`); False runs every stage alone.
        mps: Whether the stages run under an MPS control daemon of the run's own
            (:mod:`~attnlab.fanout.mps`), started after the first plan, stopped at the end.
        executor: ``local``: the stages run on this machine; ``slurm``: every unit (a
            seed group, a lone stage) is a SLURM job asking what ``runtime.slurm`` says
            (:mod:`~attnlab.fanout.slurm`), ``jobs`` of them in the queue at once.
        time_limit: Seconds of this slice: start only what fits, stop at the limit, and
            say what is left (:mod:`~attnlab.fanout.time_limit`). None: no limit.
        confirm: Asked before work predicted over :data:`LONG_S` without a time limit;
            first the report is rendered from what is current and the stale stages are
            told. False ends the run there (done, nothing long started). None: no asking.
        out: Where the progress lines go.

    Raises:
        AttnlabError: bad arguments, an invalid override, or DVC cannot plan the run.
    """
    began = time.monotonic()  # a time limit counts the inputs' rebuild too
    environ = dict(os.environ)
    slurm = None
    if executor == "slurm":
        if mps != "off":
            raise AttnlabError("--mps is for this machine's GPUs; SLURM jobs get theirs by --gres")
        slurm = SlurmExecutor(settings_of(root))
        if jobs is not None and jobs < 1:
            raise AttnlabError(f"--jobs must be at least 1, not {jobs}")
        resources = Resources(jobs or SLURM_JOBS, threads=slurm.settings.cpus_per_job)
        start = slurm.start
    else:
        resources = plan_resources(
            usable_cores(), visible_devices(environ, driver_devices()), jobs, per_device
        )
        start = Child.start
    experiment, change = None, ParamsChange()
    if set_params or name:
        change = apply_params(root, set_params)
        experiment = experiment_name(name)
        environ[EXPERIMENT_VARIABLE] = experiment
    saved = False
    try:
        # An absent input is rebuilt first, as plain `dvc repro` would; the rest is planned
        # once the inputs exist.
        inputs, plan = first_plan(root, targets, allow_missing)
        with (
            _served(mps, root, environ, resources, out) as (environ, resources),
            _no_job_left(slurm),
        ):
            result = FanOutResult()
            if plan is None:
                result = FanOut(
                    root, inputs, resources, environ, out, seed_groups=seed_groups, start=start
                ).run()
                if not result.ok:
                    return result
                plan = read_plan(root, targets, allow_missing=allow_missing)
            change.announce(plan.order, out)
            if experiment is not None and targets:
                plan = with_views(plan)  # the experiment's metrics and charts show its runs
            asking = confirm is not None and time_limit is None
            on_gpu = bool(resources.devices) or bool(slurm and slurm.settings.gres)
            if not on_gpu:
                print(mkl_avx512.describe(), file=out)  # the stages' fp32 kernels, said once
            predicted = _forecast(
                root, plan, resources, on_gpu, run_root_from_env(environ), out, not asking
            )
            if slurm is not None:
                slurm.forecast = predicted  # each job's --time
            limit = None
            if time_limit is not None and predicted is not None:
                limit = TimeLimit(time_limit, predicted, plan, _sweep_trials(root), began)
            elif asking and predicted is not None and predicted.wall_s > LONG_S:
                views = StagePlan(tuple(name for name in plan.order if name in VIEWS))
                short = FanOut(
                    root, views, resources, environ, out, allow_missing, None, seed_groups, start
                )
                result = merged(result, short.run())
                _tell_plan(root, plan, predicted, out)
                if not result.ok or not confirm():
                    result.left = [name for name in plan.order if name not in VIEWS]
                    return result
            fan_out = FanOut(
                root,
                plan,
                resources,
                environ,
                out,
                allow_missing,
                predicted,
                seed_groups,
                start,
                limit,
            )
            result = merged(result, fan_out.run())
            if limit is not None and result.left + result.stopped:
                print(limit.left_line(result.ran + result.up_to_date), file=out)
        wrote = result.ran + result.failed + result.stopped  # a stopped training has its run too
        line = sync_line(
            offline_runs(dict.fromkeys(result.logs[s] for s in wrote if s in result.logs))
        )
        if line:
            print(line, file=out)
        if experiment is not None and result.ok and not (result.left or result.stopped):
            save_experiment(root, experiment, (*inputs.order, *plan.order) or targets)
            saved = True
            print(f"saved experiment {experiment} (dvc exp show lists it)", file=out)
            if change.originals:
                print(change.applied_line(root, experiment), file=out)
        return result
    finally:
        if not saved:  # stopped, failed, refused or cut short: the knob is not left behind
            change.put_back(root, out)


@contextlib.contextmanager
def _no_job_left(slurm: SlurmExecutor | None) -> Iterator[None]:
    """Cancel every SLURM job submitted when the launcher fails (a stop cancels its own)."""
    try:
        yield
    except BaseException:
        if slurm is not None:
            slurm.cancel_all()
        raise


@contextlib.contextmanager
def _served(
    mode: MpsMode, root: Path, environ: dict[str, str], resources: Resources, out: TextIO
) -> Iterator[tuple[dict[str, str], Resources]]:
    """The stages' environment and resources, under an MPS daemon of the run's own if asked."""
    decision = decide(mode, resources.devices, shutil.which(CONTROL), environ)
    with mps_daemon(decision, environ, root / LOG_FOLDER / "mps", out) as served:
        if served is None:
            yield environ, resources
        else:  # the daemon's servers number the devices from 0
            yield served, dataclasses.replace(resources, renumbered=True)


def _sweep_trials(root: Path) -> dict[str, int]:
    """Each sweep stage's trials (a time limit admits a sweep one trial at a time)."""
    from attnlab.config import load_params

    studies = load_params(root / "params.yaml").sweeps.studies
    return {f"sweep@{name}": study.trials for name, study in studies.items()}


def _tell_plan(root: Path, plan: StagePlan, predicted: Forecast, out: TextIO) -> None:
    """What is stale and why, by experiment, and the commands that bring it up to date."""
    stale = [name for name in plan.order if name not in VIEWS]
    print(f"the record is stale here: {len(stale)} stages to run, by experiment:", file=out)
    for line in stale_summary(root, StagePlan(tuple(stale))):
        print(line, file=out)
    print(
        f"predicted: {clock(predicted.wall_s)} on this machine; nothing long was started.\n"
        "Continue with one of:\n"
        "  attnlab repro --time-limit 2h   what fits in 2 hours (any duration: 90m, 1h30m); "
        "the same command continues\n"
        "  attnlab repro --yes             all of it now (Ctrl-C stops it; rerun continues)\n"
        "  attnlab repro --retrain         all of it, and every model absent here too, "
        "as plain dvc repro",
        file=out,
        flush=True,
    )


def _forecast(
    root: Path,
    plan: StagePlan,
    resources: Resources,
    on_gpu: bool,
    run_root: Path,
    out: TextIO,
    show_longest: bool = True,
) -> Forecast | None:
    """The plan's forecast from the record, announced; its stages listed when it is long.

    Trainings stopped part-way in ``run_root`` cost their steps left.
    """
    if not plan.order:
        return None
    from attnlab.config import load_params

    kind = "cuda" if on_gpu else "cpu"
    kernels = None if on_gpu else mkl_avx512.fp32_matmul_path()
    record = RecordedCosts(root, kind, kernels)
    costs = catalogue_costs(load_params(root / "params.yaml"), record, resume_steps(run_root))
    predicted = forecast(costs, plan.order, plan.needs, resources.jobs, on_gpu)
    wall = predicted.wall_s
    print(f"predicted: {clock(wall)} on this machine (from {predicted.basis})", file=out)
    planned = {m["variant"] for name in plan.order if (m := SEEDED_STAGE.match(name))}
    if other := sorted(planned & set(costs.other_kernels)):
        print(
            f"  {len(other)} planned variant(s) not recorded on this machine's fp32 kernels "
            f"({kernels}) yet, so their times may be off: {', '.join(other[:3])}"
            + (f" and {len(other) - 3} more" if len(other) > 3 else ""),
            file=out,
        )
    if wall > LONG_S and show_longest:
        print(f"the longest of the {len(plan.order)} planned stages:", file=out)
        for line in predicted.plan_lines():
            print(line, file=out)
        print("Ctrl-C stops every stage at its next step; the same command continues.", file=out)
    return predicted
