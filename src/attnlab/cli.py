"""The ``attnlab`` command: one subcommand per DVC stage, each the stage's own script.

The stage scripts in ``pipeline/`` are what ``dvc.yaml`` runs; this command loads the same
scripts so that ``attnlab download --help`` and ``python pipeline/download.py --help`` can
never drift apart. It works from the root of an attnlab checkout (or below it).
"""

import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Annotated, NoReturn

import typer

from attnlab.errors import AttnlabError

# Every stage takes the params file as its one common option.
ParamsFile = Annotated[Path, typer.Option("--params", help="The params file to read.")]
DEFAULT_PARAMS = Path("params.yaml")
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


def build_app(root: Path) -> typer.Typer:
    """A Typer app with one subcommand per stage, taken from the scripts under ``root``."""
    app = typer.Typer(
        add_completion=False,
        pretty_exceptions_enable=False,
        no_args_is_help=True,
        rich_markup_mode="markdown",
        help="Run one stage of the attnlab pipeline by hand (dvc repro runs them all).",
    )
    for name, script in STAGES.items():
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
    try:
        app = build_app(find_project_root(Path.cwd()))
    except AttnlabError as err:
        _fail(str(err))
    _run_reporting_errors(app)
