"""What every stage command shares: its common options and how it reports a user's error.

A stage's ``main`` is a Typer command; :func:`run_stage` runs it as a command line (what
``python pipeline/<stage>.py``, ``python -m attnlab.stages.<stage>`` and ``attnlab
<stage>`` all come to). An :class:`~attnlab.errors.AttnlabError` or an ``OSError`` becomes
one ``error: ...`` line and exit status 2, without a traceback.
"""

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from attnlab.errors import AttnlabError

# Every stage takes the params file as its one common option.
ParamsFile = Annotated[Path, typer.Option("--params", help="The params file to read.")]
DEFAULT_PARAMS = Path("params.yaml")
# The stages of a trained variant run once per seed of params `seeds` (dvc.yaml's matrix).
_SEED_HELP = (
    "The run's seed (one of params `seeds`): its weights, dropout and batch order, "
    "unless the variant pins train.init_seed or train.data_seed."
)
RunSeed = Annotated[int, typer.Option("--seed", min=0, max=2**32 - 1, help=_SEED_HELP)]
# The train stage's: repeated, several seeds of the variant train as one seed group.
RunSeeds = Annotated[
    list[int],
    typer.Option(
        "--seed",
        min=0,
        max=2**32 - 1,
        help=f"{_SEED_HELP} Repeat it to train several seeds of the variant together in "
        "this process, each run as its own (a seed group, as attnlab repro runs them).",
    ),
]
# The training stages continue a killed run from its checkpoint unless told not to.
Resume = Annotated[bool, typer.Option(help="Resume from this configuration's checkpoint, if any.")]
DEBUG_ENV = "ATTNLAB_DEBUG"


def run_stage(main: Callable[..., None]) -> None:
    """Run a stage's ``main`` as a command line; user errors exit 2 without a traceback."""
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
    app.command()(main)
    run_reporting_errors(app)


def run_reporting_errors(app: typer.Typer) -> None:
    """Run ``app``; an error the user can fix is one ``error:`` line and exit status 2."""
    # ATTNLAB_DEBUG=1 shows the traceback behind an error line.
    if os.environ.get(DEBUG_ENV):
        app()
        return
    try:
        app()
    except AttnlabError as err:
        fail(str(err))
    except OSError as err:  # a file that cannot be read or written, named by the OS
        where = f"{err.filename}: " if err.filename else ""
        fail(f"{where}{err.strerror or err}")


def fail(message: str) -> NoReturn:
    """Print ``error: message`` to stderr and exit with status 2."""
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)
