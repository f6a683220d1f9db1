"""`attnlab --help` and `attnlab repro --help` answer without importing any stage's stack."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "lightning", "optuna", "matplotlib", "wandb", "dvc.repo")
PROBE = """
import sys
sys.argv = ["attnlab", *sys.argv[1:]]
from attnlab.cli import main
try:
    main()
except SystemExit:
    pass
print("LOADED", *sorted(m for m in {heavy!r} if m in sys.modules))
"""


@pytest.mark.parametrize("args", [["--help"], ["repro", "--help"]], ids=" ".join)
def test_help_imports_no_stage_script(args):
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "Usage: attnlab" in done.stdout
    assert done.stdout.strip().splitlines()[-1] == "LOADED"


def test_the_invoked_stage_is_loaded_and_no_other():
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY), "download", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "Reads:" in done.stdout  # the real script's help, not a summary
    loaded = done.stdout.strip().splitlines()[-1].split()
    assert "optuna" not in loaded and "matplotlib" not in loaded  # sweep's, report's
