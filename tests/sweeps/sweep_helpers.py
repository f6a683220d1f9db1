"""Helpers for the sweep tests: the real params shrunk, a project folder, W&B's offline log."""

import copy
import os
import subprocess
import sys
import time
from pathlib import Path

import optuna
from wandb_log import wandb_records  # noqa: F401 (re-exported to the tests)

from attnlab.config.files import read_params_mapping, write_params_mapping

PROJECT_ROOT = Path(__file__).resolve().parents[2]
REAL_PARAMS = read_params_mapping(PROJECT_ROOT / "params.yaml")
ATTNLAB = Path(sys.executable).parent / "attnlab"  # the installed console script


def sweep_params(trials: int = 4, steps: int = 8, **sweeps: object) -> dict:
    """The real params.yaml at width 32, context 32, batch 8, ``steps`` steps a trial.

    Study ``dk`` keeps its real search space; its variant trains ``steps`` steps (the
    study's budget shrinks to fit) with a ``val/ppl`` point every step and no pruner
    warm-up. ``sweeps`` update the sweeps section (``workers=1``).
    """
    params = copy.deepcopy(REAL_PARAMS)
    params["model"].update(d_model=32, block_size=32)
    params["variants"]["dk-128-scaled"]["train"]["batch_size"] = 8
    params["trainer"].update(accelerator="cpu")
    params["runtime"].update(log_every_n_steps=2, checkpoint={"every_n_train_steps": 1000})
    params["evaluate"].update(batch_size=64)
    params["evaluate"]["curve"].update(min_every_steps=1)
    params["budget"]["scale"] = 1.0
    study = params["sweeps"]["studies"]["dk"]
    base_steps = params["variants"]["dk-128-scaled"]["train"]["steps"]
    study.update(trials=trials, budget=steps / base_steps)
    study["sampler"].update(n_startup_trials=2)
    study["pruner"].update(n_startup_trials=1, warmup_steps=0)
    # One point a step: every_steps scales by the budget like every other step count.
    params["evaluate"]["curve"]["every_steps"] = round(base_steps / steps)
    params["sweeps"].update(sweeps)
    return params


class SweepProject:
    """A folder laid out like the project (dvc.yaml, pipeline/, params.yaml, data/tokens)."""

    def __init__(self, root: Path, tokens: Path, params: dict, env: dict[str, str]) -> None:
        self.root = root
        (root / "data").mkdir(parents=True)
        os.symlink(tokens, root / "data" / "tokens")
        os.symlink(tokens, root / "data" / "tokenizer")  # it holds tokenizer.json too
        os.symlink(PROJECT_ROOT / "pipeline", root / "pipeline")
        os.symlink(PROJECT_ROOT / "dvc.yaml", root / "dvc.yaml")
        write_params_mapping(root / "params.yaml", params)
        self.env = {**os.environ, **env, "ATTNLAB_RUN_ROOT": str(root / "runs")}

    def start(self, *args: str, **env: str) -> subprocess.Popen:
        """Start ``attnlab <args>`` in the project, its output captured."""
        return subprocess.Popen(
            [str(ATTNLAB), *args],
            cwd=self.root,
            env={**self.env, **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

    def run(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        """Run ``attnlab <args>`` to the end."""
        return subprocess.run(
            [str(ATTNLAB), *args],
            cwd=self.root,
            env={**self.env, **env},
            capture_output=True,
            text=True,
            timeout=300,
        )


def finish(process: subprocess.Popen, timeout: float = 300) -> str:
    """Wait for ``process``; its output, and a failure if it did not exit 0."""
    output, _ = process.communicate(timeout=timeout)
    assert process.returncode == 0, output
    return output


def wait_for(condition, timeout: float = 120, every: float = 0.2) -> None:
    """Poll ``condition()`` until it is true; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(every)


def load(url: str, name: str = "sweep-dk") -> optuna.Study | None:
    """The study ``name`` in storage ``url``, or None while no worker has created it."""
    try:
        return optuna.load_study(study_name=name, storage=url)
    except KeyError:
        return None
