"""Run a seed group's stage commands one after the other, each in a fork of a warm process.

A stage command of the catalogue is ``python pipeline/<stage>.py --variant V --seed S``,
and most of its fixed cost is Python importing torch and Lightning (about 5 s on two
cores), more than an evaluation at a quick-pass budget. A stage script is, by contract
(tests/test_layers.py), its docstring, ``from attnlab.stages.<stage> import main`` and
``run_stage(main)``. A group of such commands (:mod:`~attnlab.fanout.group_stage`)
imports the stage's module once, then runs each command in a fork of itself, calling
``run_stage(main)`` with the command's arguments as the script would: the command
starts warm, yet runs in a process of its own as a subprocess would, with its own exit
status, its own global state (seeds, torch's settings, W&B) and its own pid, which the
fan-out signals to stop it.

A command of any other shape, or one whose ``python`` is not this interpreter's
environment, runs as a subprocess through the shell, as DVC runs it; so does every
command once an import has made a CUDA context here (a fork cannot use it; importing
torch makes none).
"""

import ast
import contextlib
import importlib
import os
import shlex
import shutil
import subprocess
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

_RUNNER = "attnlab.stages.command"  # run_stage: what every stage script calls

# Imported lazily deep inside libraries by every training stage, so not by its module:
# W&B's run start (its launch module) and Lightning's checkpoint (omegaconf, where it is
# installed). About 1.3 s a command on two cores, paid here once for the group.
_LAZY_IN_LIBRARIES = ("wandb.sdk.launch._launch_add", "omegaconf")


@dataclass(frozen=True)
class StageCall:
    """A stage script's command: its module's ``main``, run with ``argv``."""

    module: str
    argv: list[str]


def _stage_module(script: Path) -> str | None:
    """The module whose ``main`` the stage script runs; None for any other script."""
    body = ast.parse(script.read_text(encoding="utf-8")).body
    imported = {
        node.module: {alias.name for alias in node.names}
        for node in body
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0
    }
    commands = [module for module, names in imported.items() if "main" in names]
    if imported.get(_RUNNER) != {"run_stage"} or len(imported) != 2 or len(commands) != 1:
        return None
    return commands[0]


def stage_call(command: str, root: Path) -> StageCall | None:
    """The stage script ``command`` runs (``python <script>.py ...``), if run warm here.

    None unless the system forks, ``python`` is this interpreter's environment and the
    script is a stage script.
    """
    try:
        argv = shlex.split(command)
    except ValueError:
        return None
    if len(argv) < 2 or argv[0] not in ("python", "python3") or not argv[1].endswith(".py"):
        return None
    found = shutil.which(argv[0])
    if not hasattr(os, "fork") or found is None or not (root / argv[1]).is_file():
        return None
    # The same bin folder, not the same binary: a venv's python links to its base's.
    if Path(found).parent.resolve() != Path(sys.executable).parent.resolve():
        return None
    module = _stage_module(root / argv[1])
    return None if module is None else StageCall(module, argv[1:])


def _import_lazy_library_modules() -> None:
    """Import what the libraries import lazily, where they are installed where we expect."""
    for name in _LAZY_IN_LIBRARIES:
        with contextlib.suppress(ImportError):  # a speed-up only; a moved module loses it
            importlib.import_module(name)


def _cuda_initialized() -> bool:
    """Whether this process holds a CUDA context, which a fork cannot use."""
    torch = sys.modules.get("torch")
    return torch is not None and torch.cuda.is_initialized()


def _exit_status(exit_: SystemExit) -> int:
    """The process exit status Python gives ``sys.exit(code)``."""
    if exit_.code is None:
        return 0
    if isinstance(exit_.code, int):
        return exit_.code
    print(exit_.code, file=sys.stderr)
    return 1


def _run_in_fork(call: StageCall, root: Path) -> int:
    """Run ``call`` as its script would, in a fork of this process; its exit status."""
    run_stage = importlib.import_module(_RUNNER).run_stage
    main = importlib.import_module(call.module).main
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the command's own process: it never returns from here
        status = 1
        try:
            os.chdir(root)
            sys.argv = list(call.argv)
            run_stage(main)
            status = 0
        except SystemExit as exit_:
            status = _exit_status(exit_)
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(status)
    _, wait_status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(wait_status)


def run_command(command: str, root: Path) -> int:
    """Run a stage's ``command`` in ``root`` (warm where it can); its exit status.

    A command killed by a signal gives minus the signal's number, as ``subprocess`` does.
    """
    call = stage_call(command, root)
    if call is not None:
        try:
            importlib.import_module(call.module)
        except ImportError:  # the command itself fails on it, and says so in its output
            call = None
        _import_lazy_library_modules()
    if call is None or _cuda_initialized():
        return subprocess.run(command, shell=True, cwd=root).returncode
    return _run_in_fork(call, root)
