"""The stages that never train import neither Lightning nor W&B nor Optuna (issue 14).

``evaluate``, ``winograd-score``, ``winograd-maps``, ``report`` and ``probes`` run about a
hundred times in a ``dvc repro`` of several seeds; Lightning alone costs each 3-10 s. Each
stage's command (``python -m attnlab.stages.<stage>``) runs ``--help`` in a fresh
interpreter, which imports everything the stage imports, and reports which of the training
stack it loaded. The train stage must load it,
so the probe can tell. The sweep stage trains, but its ``--help`` loads none of it either.
The stages that build no model (download, bpe, tokenize, winograd-data, report, charts)
do not even import torch: the params loader validates model configs without it, and the data stages
write their files without it.
"""

import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import attnlab.evaluation
import attnlab.metrics
import attnlab.models
import attnlab.runs
import attnlab.training

ROOT = Path(__file__).resolve().parents[1]
TRAINING_STACK = ("lightning", "wandb", "optuna")
PROBE = """
import runpy, sys
module = sys.argv[1]
sys.argv = [module, "--help"]
try:
    runpy.run_module(module, run_name="__main__", alter_sys=True)
except SystemExit:
    pass
print("LOADED", *sorted(m for m in {stack!r} if m in sys.modules))
"""
READERS = ["evaluate", "winograd_score", "winograd_maps", "report", "probes"]
# They validate every variant's config; the data stages also write what the readers load.
BUILD_NO_MODEL = ["download", "bpe", "tokenize", "winograd_data", "report", "charts"]


def _loaded_by(stage: str, stack: tuple[str, ...] = TRAINING_STACK) -> tuple[str, list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(stack=stack), f"attnlab.stages.{stage}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    *help_text, loaded = done.stdout.strip().splitlines()
    return "\n".join(help_text), loaded.split()[1:]


@pytest.mark.parametrize("stage", READERS)
def test_a_stage_that_never_trains_loads_no_training_stack(stage):
    help_text, loaded = _loaded_by(stage)
    assert "Reads:" in help_text  # the stage's own help: its module really ran
    assert loaded == []


@pytest.mark.parametrize("stage", BUILD_NO_MODEL)
def test_a_stage_that_builds_no_model_loads_no_torch(stage):
    help_text, loaded = _loaded_by(stage, stack=("torch",))
    assert "Reads:" in help_text
    assert loaded == []


def test_the_sweep_stage_answers_help_before_loading_its_stack():
    help_text, loaded = _loaded_by("sweep")
    assert "Reads:" in help_text and loaded == []


def test_the_train_stage_still_loads_lightning_and_wandb():
    _, loaded = _loaded_by("train")
    assert {"lightning", "wandb"} <= set(loaded)


@pytest.mark.parametrize(
    "package",
    [attnlab.training, attnlab.evaluation, attnlab.metrics, attnlab.runs, attnlab.models],
    ids=lambda p: p.__name__,
)
def test_every_export_resolves_and_no_submodule_hides_one(package):
    # Importing a submodule sets the package attribute of its name: an export of the same
    # name, loaded later, would be that module instead. Import them all, then read.
    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{module.name}")
    for name in package.__all__:
        assert not isinstance(getattr(package, name), ModuleType), f"{package.__name__}.{name}"
    with pytest.raises(AttributeError, match="no_such_name"):
        package.no_such_name  # noqa: B018
