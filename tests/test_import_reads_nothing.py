"""Importing the report and the verdicts reads no file, and one report module loads no other.

The catalogue (``experiments.yaml``) is read when a claim, a section or a threshold is
first asked for, never when a module is imported; a package's ``__init__`` only
re-exports, so importing one module of the report does not load the rest of it.
"""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROBE = """
import builtins, importlib, io, pathlib, sys
opened = []
real_open, real_read = io.open, pathlib.Path.read_text
def record_open(file, *args, **kwargs):
    opened.append(str(file))
    return real_open(file, *args, **kwargs)
def record_read(self, *args, **kwargs):
    opened.append(str(self))
    return real_read(self, *args, **kwargs)
builtins.open, pathlib.Path.read_text = record_open, record_read
importlib.import_module(sys.argv[1])
print("OPENED", *[f for f in opened if f.endswith((".yaml", ".json", ".csv", ".tsv"))
                  and str(pathlib.Path(f).resolve()).startswith(sys.argv[2])])
print("LOADED", *sorted(m for m in sys.modules if m.startswith("attnlab.")))
"""
MODULES = [
    "attnlab.verdicts",
    "attnlab.verdicts.record",
    "attnlab.verdicts.sweep_answers",
    "attnlab.report",
    "attnlab.report.build",
    "attnlab.report.sections",
    "attnlab.report.content",
]


def _probe(module: str) -> tuple[list[str], set[str]]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, module, str(ROOT)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    lines = dict(
        line.split(" ", 1) if " " in line else (line, "") for line in done.stdout.splitlines()
    )
    return lines["OPENED"].split(), set(lines["LOADED"].split())


@pytest.mark.parametrize("module", MODULES)
def test_importing_reads_no_file_of_the_project(module):
    opened, loaded = _probe(module)
    assert module in loaded  # it did import
    assert opened == []


def test_one_report_module_loads_neither_the_rest_of_the_report_nor_a_rule():
    _, loaded = _probe("attnlab.report.content")
    assert "attnlab.report.build" not in loaded and "attnlab.report.sections" not in loaded
    assert "attnlab.verdicts.claims" not in loaded and "attnlab.verdicts.rules" not in loaded
