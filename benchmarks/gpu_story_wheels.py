"""The wheels ``benchmarks/gpu_story.py`` carries to a GPU machine: one ``pip download`` line.

Serves the whole catalogue retrained on a machine whose Python (3.12, x86-64 Linux) holds
PyTorch, Lightning, tokenizers, pyarrow, NumPy and matplotlib but not DVC, W&B, Optuna or
pydantic, and cannot reach a package index. The line names every runtime requirement of
attnlab (pinned as ``pyproject.toml`` pins it) and every package they need in turn (pinned
at the version installed here, where the project's own pins put them), minus what that
machine already has: the six packages above and everything they need. Requirements are
read from the installed packages' metadata, their markers judged for CPython 3.12 on
x86-64 Linux, so the line follows the pins whenever they change.
"""

import importlib.metadata
import re
import tomllib
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

# What the GPU machine's Python already holds (its own builds, torch's CUDA one first).
ON_THE_MACHINE = ("torch", "lightning", "tokenizers", "pyarrow", "numpy", "matplotlib")
# Requirements no stage of a local run imports, left out with what only they need: a
# PostgreSQL study storage's driver, the live study viewer, and git over SSH (scmrepo
# imports asyncssh only to fetch or push through ssh; cryptography, 4.6 MB, comes with it).
# The wheels travel inside the 64 MiB working tree beside the repository's own ~16 MiB.
NOT_CARRIED = ("psycopg2-binary", "optuna-dashboard", "asyncssh")
# PyPI has only the source of the antlr4 runtime hydra-core pins (pure Python): pip builds
# its wheel here.
BUILT_HERE = ("antlr4-python3-runtime",)
# The GPU machine's interpreter; pip matches each manylinux tag exactly, so several are named.
PYTHON = "3.12"
PLATFORMS = (
    *(f"manylinux_2_{n}_x86_64" for n in (34, 31, 28, 27, 24, 17)),
    "manylinux2014_x86_64",
    "manylinux1_x86_64",
)


def _marker_environment() -> dict[str, str]:
    environment = default_environment()
    environment.update(
        python_version=PYTHON,
        python_full_version=f"{PYTHON}.0",
        implementation_name="cpython",
        platform_python_implementation="CPython",
        sys_platform="linux",
        platform_system="Linux",
        platform_machine="x86_64",
    )
    return environment


def _closure(names: list[str], into: dict[str, str]) -> dict[str, str]:
    """``names`` and everything they need at run time: canonical name -> installed version.

    A package of :data:`NOT_CARRIED` is neither taken nor followed.
    """
    environment = {**_marker_environment(), "extra": ""}
    skipped = {canonicalize_name(name) for name in NOT_CARRIED}
    pending = [canonicalize_name(name) for name in names]
    while pending:
        name = pending.pop()
        if name in into or name in skipped:
            continue
        try:
            distribution = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            raise SystemExit(
                f"{name} is not installed here: install attnlab's pins first"
            ) from None
        into[name] = distribution.version
        for line in distribution.requires or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate(environment):
                pending.append(canonicalize_name(requirement.name))
    return into


def project_pins(root: Path) -> dict[str, str]:
    """The runtime requirements of attnlab as ``pyproject.toml`` pins them: name -> version."""
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    pins = {}
    for line in project["dependencies"]:
        requirement = Requirement(line)
        versions = re.findall(r"==\s*([^,\s]+)", str(requirement.specifier))
        pins[canonicalize_name(requirement.name)] = versions[0] if versions else ""
    return pins


def carried(root: Path) -> dict[str, str]:
    """The packages to carry: name -> version, sorted by name."""
    pins = project_pins(root)
    present = _closure(list(ON_THE_MACHINE), {})
    needed = _closure(list(pins), {})
    versions = {name: pins.get(name) or version for name, version in needed.items()}
    return {name: versions[name] for name in sorted(versions) if name not in present}


def wheel_command(root: Path, folder: str = ".whl") -> str:
    """The one command line that fills ``folder`` with the carried wheels.

    ``pip download`` fetches the built wheels for the GPU machine's Python and platform;
    ``pip wheel`` builds the pure-Python ones PyPI has only as source.
    """
    packages = carried(root)
    built = [f"{name}=={packages.pop(name)}" for name in BUILT_HERE if name in packages]
    platforms = " ".join(f"--platform {tag}" for tag in PLATFORMS)
    fetched = " ".join(f"{name}=={version}" for name, version in packages.items())
    line = (
        "python3 -m pip download --no-deps --only-binary=:all: "
        f"--python-version {PYTHON} --implementation cp {platforms} -d {folder} {fetched}"
    )
    if built:
        line += f" && python3 -m pip wheel --no-deps -w {folder} {' '.join(built)}"
    return line
