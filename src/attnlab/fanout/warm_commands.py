"""Run a seed group's stage commands one after the other, each in a fork of a warm process.

A stage command of the catalogue is ``python pipeline/<stage>.py --variant V --seed S``,
and most of its fixed cost is Python importing torch and Lightning (about 5 s on two
cores), more than an evaluation at a quick-pass budget. A group of such commands
(:mod:`~attnlab.fanout.group_stage`) imports what the script imports once, then runs
each command in a fork of itself: the command starts warm, yet runs in a process of its
own as a subprocess would, with its own exit status, its own global state (seeds, torch's
settings, W&B) and its own pid, which the fan-out signals to stop it. A command of any
other shape, or one whose ``python`` is not this interpreter's environment, runs as a
subprocess through the shell, as DVC runs it; so does every command once an import has
made a CUDA context here (a fork cannot use it; importing torch makes none).
"""

import ast
import contextlib
import importlib
import os
import runpy
import shlex
import shutil
import subprocess
import sys
import traceback
from pathlib import Path


def _script_argv(command: str, root: Path) -> list[str] | None:
    """``[script, arg...]`` of a ``python <script>.py ...`` command this process can fork.

    None unless the system forks, the script is a file and ``python`` is this
    interpreter's environment.
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
    return argv[1:]


def _import_what_it_imports(script: Path) -> None:
    """Import the modules ``script`` imports at its top level, once for every fork."""
    for node in ast.parse(script.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            try:
                importlib.import_module(name)
            except ImportError:
                return  # the command itself fails on it, and says so in its own output


# Imported lazily deep inside libraries by every training stage, so not by its script:
# W&B's run start (its launch module) and Lightning's checkpoint (omegaconf, where it is
# installed). About 2.4 s a command on two cores, paid here once for the group.
_LAZY_IN_LIBRARIES = ("wandb.sdk.launch._launch_add", "omegaconf")


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


def _run_in_fork(argv: list[str], root: Path) -> int:
    """Run the script ``argv[0]`` with ``argv`` as ``sys.argv`` in a fork; its exit status."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the command's own process: it never returns from here
        status = 1
        try:
            os.chdir(root)
            sys.argv = list(argv)
            runpy.run_path(argv[0], run_name="__main__")
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
    argv = _script_argv(command, root)
    if argv is None:
        return subprocess.run(command, shell=True, cwd=root).returncode
    _import_what_it_imports(root / argv[0])
    _import_lazy_library_modules()
    if _cuda_initialized():
        return subprocess.run(command, shell=True, cwd=root).returncode
    return _run_in_fork(argv, root)
