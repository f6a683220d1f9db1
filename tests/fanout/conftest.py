"""A tiny DVC project of seeded stages, for what the fan-out writes in dvc.lock."""

import subprocess
import sys
from pathlib import Path

import dvc.repo  # noqa: F401  (see below)
import pytest

# DVC sets up its log handler when first imported, writing to the sys.stdout of that
# moment: imported here, before any test's capsys, so no test's closed stream is kept.

# Stages named as the catalogue's (<family>@<variant>-<seed>); each run of a command adds
# a line to ran.log (not an output), so a test can tell a run from a checkout.
DVC_YAML = """\
stages:
  count:
    matrix: {word: [alpha, beta, gamma], seed: [1, 2]}
    cmd: python -c "import sys; open(sys.argv[1], 'w').write(sys.argv[2]);
      open('ran.log', 'a').write(sys.argv[1] + chr(10))"
      out/${item.word}-${item.seed}.txt ${item.word}
    deps: ["inputs/${item.word}.txt"]
    params: [scale]
    outs: ["out/${item.word}-${item.seed}.txt"]
"""


def run_dvc(root: Path, *args: str) -> str:
    """DVC's command line in ``root``; its output."""
    done = subprocess.run(
        [sys.executable, "-m", "dvc", *args], cwd=root, check=True, capture_output=True, text=True
    )
    return done.stdout


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.fixture(scope="module")
def tiny_dvc_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A DVC project whose first stages DVC itself recorded, the others not yet."""
    root = tmp_path_factory.mktemp("tiny-dvc")
    _git(root, "init", "-q")
    _git(root, "config", "user.email", "lab@example.org")
    _git(root, "config", "user.name", "lab")
    run_dvc(root, "init", "-q")
    (root / "dvc.yaml").write_text(DVC_YAML)
    (root / "params.yaml").write_text("scale: 0.5  # the knob\n")
    (root / "inputs").mkdir()
    (root / "out").mkdir()
    for word in ("alpha", "beta", "gamma"):
        (root / "inputs" / f"{word}.txt").write_text(word * 3)
    for stage in ("count@alpha-1", "count@alpha-2", "count@beta-1", "count@gamma-2"):
        run_dvc(root, "repro", "--single-item", stage)
    return root
