"""The ``attnlab`` command: one subcommand per DVC stage, each the stage's own command.

The stage commands live in :mod:`attnlab.stages` (one module per stage); ``dvc.yaml`` runs
them through the thin ``pipeline/<stage>.py`` entry points, so ``attnlab download --help``
and ``python pipeline/download.py --help`` can never drift apart. It works from the root of
an attnlab checkout (or below it).

Only the module of the stage being invoked is imported: a stage imports torch, Lightning,
Optuna or matplotlib (seconds each), so ``attnlab --help`` lists the others by the first
line of their ``main`` docstring, read from the module's source without running it.
``attnlab repro`` (the fan-out, :mod:`attnlab.fanout`) and ``attnlab merge-record`` (what
another machine's fan-out recorded, into this checkout) are the commands that are not
stages.
"""

import ast
import importlib
import importlib.util
import sys
from collections.abc import Collection
from pathlib import Path
from typing import Annotated, Literal

import typer

from attnlab.errors import AttnlabError
from attnlab.stages.command import fail, run_reporting_errors

# Stage name (dvc.yaml's, before any @) -> the module of its command.
STAGES: dict[str, str] = {
    "download": "attnlab.stages.download",
    "bpe": "attnlab.stages.bpe",
    "tokenize": "attnlab.stages.tokenize",
    "train": "attnlab.stages.train",
    "evaluate": "attnlab.stages.evaluate",
    "probes": "attnlab.stages.probes",
    "cost": "attnlab.stages.cost",
    "sweep": "attnlab.stages.sweep",
    "sweep-check": "attnlab.stages.sweep_check",
    "report": "attnlab.stages.report",
    "charts": "attnlab.stages.charts",
    "winograd-data": "attnlab.stages.winograd_data",
    "winograd-train": "attnlab.stages.winograd_train",
    "winograd-score": "attnlab.stages.winograd_score",
    "winograd-maps": "attnlab.stages.winograd_maps",
}


def find_project_root(start: Path) -> Path:
    """The nearest folder at or above ``start`` that holds ``dvc.yaml`` and ``pipeline/``."""
    for folder in (start, *start.parents):
        if (folder / "dvc.yaml").is_file() and (folder / "pipeline").is_dir():
            return folder
    raise AttnlabError(f"{start} is not inside an attnlab checkout (no dvc.yaml and pipeline/)")


def repro_command(
    targets: Annotated[
        list[str] | None, typer.Argument(help="Stages to bring up to date (default: all).")
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs", "-j", help="Stages at once (default: one per core, or per GPU place)."
        ),
    ] = None,
    per_device: Annotated[
        int, typer.Option(help="Stages that share one GPU at once (GPU machines only).")
    ] = 4,
    set_param: Annotated[
        list[str] | None,
        typer.Option(
            "--set-param", "-S", help="key=value, as `dvc exp run -S`; saves an experiment."
        ),
    ] = None,
    name: Annotated[
        str | None, typer.Option("--name", "-n", help="The experiment's name (with -S).")
    ] = None,
    allow_missing: Annotated[
        bool,
        typer.Option(
            "--allow-missing/--retrain",
            help="Start from the record (the default): rebuild absent inputs, and skip stages "
            "whose only change is absent data (models not in the cache), as `dvc repro "
            "--allow-missing`. --retrain: run every stage whose outputs are absent, as "
            "`dvc repro` does; on a clone of the record that retrains every model.",
        ),
    ] = True,
    seed_groups: Annotated[
        bool,
        typer.Option(
            "--seed-groups/--no-seed-groups",
            help="Start the ready stages of one variant's seeds as one process (train "
            "stages train together), then record each stage as DVC would (the default); "
            "--no-seed-groups runs each stage alone.",
        ),
    ] = True,
    mps: Annotated[
        # attnlab.fanout.mps.MpsMode, spelled out: importing the fan-out costs a second here.
        Literal["off", "on", "auto"],
        typer.Option(
            help="Run the stages under an NVIDIA MPS control daemon of this run's own, so "
            "that the stages sharing a GPU run their kernels at once; stopped at the end. "
            "on: start it, or say in one line why it cannot (no GPU, no "
            "nvidia-cuda-mps-control) and run without it; auto: the same, silent on a "
            "machine with no GPU.",
        ),
    ] = "off",
    executor: Annotated[
        Literal["local", "slurm"],
        typer.Option(
            help="local: the stages run on this machine. slurm: each unit (a seed group, a "
            "lone stage) is submitted with sbatch, asking for what runtime.yaml's "
            "runtime.slurm says, --jobs of them queued at once (default 500); the project "
            "must be on a filesystem the nodes share. Ctrl-C cancels the jobs.",
        ),
    ] = "local",
    time_limit: Annotated[
        str | None,
        typer.Option(
            help="Run what fits in this much time (90m, 2h, 1h30m, or seconds), by the "
            "predicted costs: a training with its evaluation, a sweep trial by trial; at the "
            "limit, stop the running stages at their next step and exit 0. The same command "
            "continues.",
        ),
    ] = None,
    yes: Annotated[
        bool,
        typer.Option(
            "--yes", "-y", help="Start work predicted over 15 minutes without asking first."
        ),
    ] = False,
) -> None:
    """Bring the pipeline up to date like `dvc repro`, running independent stages at once.

    Each stage runs as `dvc repro --single-item <stage>`, in the order of DVC's stage
    graph, and only if DVC says it is not up to date: the same `dvc.lock` entries and
    metrics as a serial `dvc repro`. Torch threads are divided so that jobs x threads
    stays within the cores (OMP_NUM_THREADS and MKL_NUM_THREADS of each stage); on GPUs
    each stage sees one device (CUDA_VISIBLE_DEVICES). Ctrl-C or SIGTERM stops every stage
    at its next step (training saves its checkpoint first); rerunning continues. The
    outputs of a stage stopped or failed half-way are restored from git or DVC's cache.
    One `attnlab repro` runs in a project at a time. With
    `-S`, params.yaml is changed as `dvc exp run -S` would, and the result is saved with
    `dvc exp save` so that `dvc exp show` lists it; with targets, the charts and the report
    follow, so that the experiment's metrics show what changed. By default a run starts
    from the record: absent inputs (corpus, tokenizer, tokens, Winograd sentences) are
    rebuilt, and a stage whose only change is absent data is current, so a fresh clone of
    the record runs only what your changes made stale; `--retrain` runs every stage whose
    outputs are absent. Before work predicted to take over 15 minutes (the record's costs
    scaled by this machine's speed) the plan is printed. With `--mps on` the stages sharing
    a GPU run under NVIDIA's MPS daemon, started for the run and stopped at its end. The
    ready train stages of one variant start as one seed group: one process trains their
    seeds together (each run as its own), then each stage's entry is written into
    `dvc.lock` as `dvc repro` writes it. Stage logs: .dvc/tmp/attnlab-repro/. With
    `--executor slurm` each unit is a SLURM job instead (docs/reference.md, On a cluster).

    Without targets, work predicted over 15 minutes starts only when asked (`--yes`,
    `--retrain`, `--time-limit`, or yes at the prompt on a terminal): otherwise the
    report is rendered from what is current, and what is stale, why, the predicted time
    and the commands that continue are printed. `--time-limit` starts only what fits in
    it and leaves the rest to the same command, on this machine or, after a commit of
    `dvc.lock`, `reports/` and `data/sweeps/`, on another.
    """
    from attnlab.fanout import parse_duration, repro
    from attnlab.fanout.exclusive import only_fan_out

    limit = parse_duration(time_limit) if time_limit is not None else None
    asks = not (targets or set_param or name or yes or limit) and allow_missing
    root = find_project_root(Path.cwd())
    with only_fan_out(root):  # before -S touches params.yaml: a second run changes nothing
        result = repro(
            root,
            targets or (),
            jobs=jobs,
            per_device=per_device,
            set_params=set_param or (),
            name=name,
            allow_missing=allow_missing,
            seed_groups=seed_groups,
            mps=mps,
            executor=executor,
            time_limit=limit,
            confirm=_ask if asks else None,
        )
    if result.signal is not None:
        sys.exit(128 + result.signal)
    if not result.ok:
        print(
            f"error: {len(result.failed)} stage(s) failed: {', '.join(result.failed)}; "
            f"{len(result.blocked)} not started because of them",
            file=sys.stderr,
        )
        sys.exit(1)


def merge_record_command(
    tarball: Annotated[Path, typer.Argument(help="A gpu_story.tar.gz (or the same layout).")],
) -> None:
    """Take into this checkout the stages another machine recorded, where they are current.

    For a tarball of `benchmarks/gpu_story.py`: each stage it recorded comes into
    `dvc.lock` with the files git keeps for it (metrics, curves, sweep reports and
    journals), and stays only if DVC counts it current here (`dvc repro --allow-missing`'s
    test: the same code, params and inputs). Then commit: `git add dvc.lock reports
    data/sweeps`.
    """
    from attnlab.fanout.exclusive import only_fan_out
    from attnlab.fanout.merge_record import merge_record

    root = find_project_root(Path.cwd())
    with only_fan_out(root):  # no fan-out writes dvc.lock meanwhile
        merged = merge_record(root, tarball.resolve())
    for line in merged.lines():
        print(line)


def _ask() -> bool:
    """Yes at a prompt on a terminal; no answer (no terminal) is no."""
    if not sys.stdin.isatty():
        return False
    try:
        answer = input("Start it now? [y/N] ")
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")


def _summary(module: str) -> str:
    """The first line of the module's ``main`` docstring, without importing the module."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise AttnlabError(f"no stage module {module}")
    for node in ast.parse(Path(spec.origin).read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef) and node.name == "main":
            return (ast.get_docstring(node) or "").split("\n", 1)[0]
    return ""


def _not_loaded() -> None:
    # Listed in --help only; main() imports the module of the stage it is asked to run.
    raise AttnlabError("this stage's command was not loaded; run it through attnlab.cli.main")


def build_app(load: Collection[str] | None = None) -> typer.Typer:
    """A Typer app with ``repro`` and one subcommand per stage of :data:`STAGES`.

    Args:
        load: The stages whose modules are imported; the others are listed by their
            summary only. None loads every stage.
    """
    app = typer.Typer(
        add_completion=False,
        pretty_exceptions_enable=False,
        no_args_is_help=True,
        rich_markup_mode=None,
        help="Run the attnlab pipeline (`repro`, several stages at once) or one stage by hand.",
    )
    app.command("repro")(repro_command)
    app.command("merge-record")(merge_record_command)
    for name, module_name in STAGES.items():
        if load is not None and name not in load:
            app.command(name, help=_summary(module_name))(_not_loaded)
            continue
        module = importlib.import_module(module_name)
        commands = getattr(module, "COMMANDS", None)
        if commands is None:
            app.command(name)(module.main)
            continue
        # A stage with companion commands becomes a group: `attnlab sweep run | worker`.
        group = typer.Typer(no_args_is_help=True, rich_markup_mode=None)
        for command, function in commands.items():
            group.command(command)(function)
        app.add_typer(group, name=name, help=module.main.__doc__)
    return app


def main() -> None:
    """Entry point of the ``attnlab`` console script."""
    words = [arg for arg in sys.argv[1:] if not arg.startswith("-")]
    try:
        find_project_root(Path.cwd())
        app = build_app(load=words[:1])
    except AttnlabError as err:
        fail(str(err))
    run_reporting_errors(app)
