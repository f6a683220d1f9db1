"""The ``attnlab`` command: one subcommand per DVC stage, each the stage's own script.

The stage scripts in ``pipeline/`` are what ``dvc.yaml`` runs; this command loads the same
scripts so that ``attnlab download --help`` and ``python pipeline/download.py --help`` can
never drift apart. It works from the root of an attnlab checkout (or below it).

Only the script of the stage being invoked is imported: a stage script imports torch,
Lightning, Optuna or matplotlib (seconds each), so ``attnlab --help`` lists the others by
the first line of their ``main`` docstring, read from the source without running it.
``attnlab repro`` (the fan-out, :mod:`attnlab.fanout`) is the one command that is not a
stage.
"""

import ast
import importlib.util
import os
import sys
from collections.abc import Callable, Collection
from pathlib import Path
from types import ModuleType
from typing import Annotated, NoReturn

import typer

from attnlab.errors import AttnlabError

# Every stage takes the params file as its one common option.
ParamsFile = Annotated[Path, typer.Option("--params", help="The params file to read.")]
DEFAULT_PARAMS = Path("params.yaml")
# The stages of a trained variant run once per seed of params `seeds` (dvc.yaml's matrix).
RunSeed = Annotated[
    int,
    typer.Option(
        "--seed",
        min=0,
        max=2**32 - 1,
        help="The run's seed (one of params `seeds`): its weights, dropout and batch order, "
        "unless the variant pins train.init_seed or train.data_seed.",
    ),
]
DEBUG_ENV = "ATTNLAB_DEBUG"

# Stage name -> its script, relative to the project root (the folder holding dvc.yaml).
STAGES: dict[str, str] = {
    "download": "pipeline/download.py",
    "bpe": "pipeline/bpe.py",
    "tokenize": "pipeline/tokenize_corpus.py",
    "train": "pipeline/train.py",
    "evaluate": "pipeline/evaluate.py",
    "probes": "pipeline/probes.py",
    "cost": "pipeline/cost.py",
    "sweep": "pipeline/sweep.py",
    "sweep-check": "pipeline/sweep_check.py",
    "report": "pipeline/report.py",
    "winograd-data": "pipeline/winograd_data.py",
    "winograd-train": "pipeline/winograd_train.py",
    "winograd-score": "pipeline/winograd_score.py",
    "winograd-maps": "pipeline/winograd_maps.py",
}


def run_stage(main: Callable[..., None]) -> None:
    """Run a stage's ``main`` as a command line; user errors exit 2 without a traceback."""
    app = typer.Typer(
        add_completion=False, pretty_exceptions_enable=False, rich_markup_mode="markdown"
    )
    app.command()(main)
    _run_reporting_errors(app)


def _run_reporting_errors(app: typer.Typer) -> None:
    # ATTNLAB_DEBUG=1 shows the traceback behind an error line.
    if os.environ.get(DEBUG_ENV):
        app()
        return
    try:
        app()
    except AttnlabError as err:
        _fail(str(err))
    except OSError as err:  # a file that cannot be read or written, named by the OS
        where = f"{err.filename}: " if err.filename else ""
        _fail(f"{where}{err.strerror or err}")


def _fail(message: str) -> NoReturn:
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


def find_project_root(start: Path) -> Path:
    """The nearest folder at or above ``start`` that holds ``dvc.yaml`` and ``pipeline/``."""
    for folder in (start, *start.parents):
        if (folder / "dvc.yaml").is_file() and (folder / "pipeline").is_dir():
            return folder
    raise AttnlabError(f"{start} is not inside an attnlab checkout (no dvc.yaml and pipeline/)")


def _load_script(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"attnlab_stage_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise AttnlabError(f"cannot load the stage script {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
) -> None:
    """Bring the pipeline up to date like `dvc repro`, running independent stages at once.

    Each stage runs as `dvc repro --single-item <stage>`, in the order of DVC's stage
    graph, and only if DVC says it is not up to date: the same `dvc.lock` entries and
    metrics as a serial `dvc repro`. Torch threads are divided so that jobs x threads
    stays within the cores (OMP_NUM_THREADS and MKL_NUM_THREADS of each stage); on GPUs
    each stage sees one device (CUDA_VISIBLE_DEVICES). Ctrl-C or SIGTERM stops every stage
    at its next step (training saves its checkpoint first); rerunning continues. With
    `-S`, params.yaml is changed as `dvc exp run -S` would, and the result is saved with
    `dvc exp save` so that `dvc exp show` lists it. Stage logs: .dvc/tmp/attnlab-repro/.
    """
    from attnlab.fanout import repro

    result = repro(
        find_project_root(Path.cwd()),
        targets or (),
        jobs=jobs,
        per_device=per_device,
        set_params=set_param or (),
        name=name,
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


def _summary(path: Path) -> str:
    """The first line of the script's ``main`` docstring, without importing the script."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef) and node.name == "main":
            return (ast.get_docstring(node) or "").split("\n", 1)[0]
    return ""


def _not_loaded() -> None:
    # Listed in --help only; main() loads the script of the stage it is asked to run.
    raise AttnlabError("this stage's script was not loaded; run it through attnlab.cli.main")


def build_app(root: Path, load: Collection[str] | None = None) -> typer.Typer:
    """A Typer app with ``repro`` and one subcommand per stage, from the scripts under ``root``.

    Args:
        root: The project root (the folder holding ``dvc.yaml`` and ``pipeline/``).
        load: The stages whose scripts are imported; the others are listed by their
            summary only. None loads every stage.
    """
    app = typer.Typer(
        add_completion=False,
        pretty_exceptions_enable=False,
        no_args_is_help=True,
        rich_markup_mode="markdown",
        help="Run the attnlab pipeline (`repro`, several stages at once) or one stage by hand.",
    )
    app.command("repro")(repro_command)
    for name, script in STAGES.items():
        if load is not None and name not in load:
            app.command(name, help=_summary(root / script))(_not_loaded)
            continue
        module = _load_script(root / script)
        commands = getattr(module, "COMMANDS", None)
        if commands is None:
            app.command(name)(module.main)
            continue
        # A stage with companion commands becomes a group: `attnlab sweep run | worker`.
        group = typer.Typer(no_args_is_help=True, rich_markup_mode="markdown")
        for command, function in commands.items():
            group.command(command)(function)
        app.add_typer(group, name=name, help=module.main.__doc__)
    return app


def main() -> None:
    """Entry point of the ``attnlab`` console script."""
    words = [arg for arg in sys.argv[1:] if not arg.startswith("-")]
    try:
        app = build_app(find_project_root(Path.cwd()), load=words[:1])
    except AttnlabError as err:
        _fail(str(err))
    _run_reporting_errors(app)
