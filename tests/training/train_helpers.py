"""Helpers for the training tests: shrunk params, a stage folder, W&B's offline log."""

import copy
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from wandb_log import wandb_records  # noqa: F401 (re-exported to the tests)

from attnlab.config import parse_params
from attnlab.config.files import read_params_mapping, write_params_mapping
from attnlab.training import FitOptions, TrainJob, TrainResult, train_variant

PROJECT_ROOT = Path(__file__).resolve().parents[2]
TRAIN_SCRIPT = PROJECT_ROOT / "pipeline" / "train.py"
REAL_PARAMS = read_params_mapping(PROJECT_ROOT / "params.yaml")
SEED = REAL_PARAMS["seeds"][0]  # the one seed the shrunk params keep


def run_folder(variant: str, seed: int = SEED) -> str:
    """``<variant>/seed-<seed>``: where a run's outputs lie under data/models, reports/..."""
    return f"{variant}/seed-{seed}"


def shrunk_params(steps: int = 6, **sections: dict) -> dict:
    """The real params.yaml at width 32, context 32, batch 8, one seed; 3000 steps become ``steps``.

    ``sections`` update top-level sections key by key (``trainer={"devices": 2}``).
    """
    params = copy.deepcopy(REAL_PARAMS)
    params["seeds"] = [SEED]
    params["budget"]["scale"] = steps / 3000
    params["model"].update(d_model=32, block_size=32)
    params["train"].update(batch_size=8)
    params["trainer"].update(accelerator="cpu")
    params["runtime"].update(log_every_n_steps=2, checkpoint={"every_n_train_steps": 2})
    params["evaluate"]["curve"]["min_every_steps"] = 1  # a run of a few steps keeps its points
    for name, values in sections.items():
        params[name].update(values)
    return params


def train_here(
    params: dict, variant: str, root: Path, tokens: Path, seed: int | None = None, **options
) -> TrainResult:
    """Run :func:`train_variant` in this process with run state under ``root``.

    ``seed`` is the run's seed; None trains with the root ``seed``, as a sweep trial does.
    ``options``: the run's ``curve``, ``callbacks`` and ``along``, and any of
    :class:`FitOptions` beyond where it reads and writes.
    """
    job = TrainJob.from_params(parse_params(params), variant, seed)
    member = {key: options.pop(key) for key in ("curve", "callbacks", "along") if key in options}
    fit = FitOptions(
        tokens, root / "runs", root / "wandb", live_progress=False, project_dir=root, **options
    )
    return train_variant(job, fit, **member)


class StageProject:
    """A folder laid out like the project (params.yaml, data/tokens) to run the stage in."""

    def __init__(self, root: Path, tokens: Path, params: dict) -> None:
        self.root = root
        (root / "data" / "tokens").mkdir(parents=True)
        for split in ("train", "val"):
            os.symlink(
                tokens.with_name(f"{split}.parquet"), root / "data/tokens" / f"{split}.parquet"
            )
        (root / "data" / "tokenizer").mkdir()
        for name in ("tokenizer.json", "manifest.json"):  # the tokenizer, with its SHA-256
            os.symlink(tokens.with_name(name), root / "data/tokenizer" / name)
        write_params_mapping(root / "params.yaml", params)
        self.env = {
            **os.environ,
            "ATTNLAB_RUN_ROOT": str(root / "runs"),
            "WANDB_DIR": str(root / "wandb"),
            "WANDB_MODE": "offline",
            # One thread: fastest for tiny models, and the same float summation order in
            # every run a test compares bit for bit.
            "OMP_NUM_THREADS": "1",
        }

    def command(self, variant: str, *options: str) -> list[str]:
        """The stage's command line (the script dvc.yaml runs), for the run of ``SEED``.

        ``options`` may name more seeds (``--seed``): the command then trains a seed group.
        """
        return [
            sys.executable,
            str(TRAIN_SCRIPT),
            "--variant",
            variant,
            "--seed",
            str(SEED),
            *options,
        ]

    def start(self, variant: str, *options: str) -> subprocess.Popen:
        """Start the stage in the background, its output captured."""
        return subprocess.Popen(
            self.command(variant, *options),
            cwd=self.root,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

    def run(self, variant: str, *options: str) -> subprocess.CompletedProcess[str]:
        """Run the stage to the end."""
        return subprocess.run(
            self.command(variant, *options),
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=600,
        )

    def checkpoints(self) -> list[Path]:
        """Every last.ckpt under this project's run root."""
        return sorted((self.root / "runs").glob("checkpoints/*/last.ckpt"))


def stop_after_first_checkpoint(
    project: StageProject, variant: str, sig: int, *options: str
) -> str:
    """Start the stage, send ``sig`` once its first checkpoint exists; its output.

    The stage must not have finished by then (its exit status is not 0).
    """
    process = project.start(variant, *options)
    deadline = time.monotonic() + 300
    while not project.checkpoints():
        assert process.poll() is None, (
            f"ended before its first checkpoint:\n{process.stdout.read()}"
        )
        assert time.monotonic() < deadline, "no checkpoint within 300 s"
        time.sleep(0.005)
    process.send_signal(sig)
    output, _ = process.communicate(timeout=120)
    assert process.returncode != 0, f"training finished before the signal:\n{output}"
    return output


def free_port() -> int:
    """A TCP port nobody listens on right now (for DDP's MASTER_PORT)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def offline_runs(wandb_dir: Path) -> list[Path]:
    """The ``.wandb`` files of every offline run under a W&B directory."""
    return sorted(wandb_dir.glob("wandb/offline-run-*/run-*.wandb"))


def read_offline_run(run_file: Path, finished: bool = True) -> dict:
    """The config, summary, name, group, id, resume flag and exit code of an offline run.

    W&B's service appends a finished run's last records to the file asynchronously, after
    ``run.finish()`` has returned; with ``finished`` the file is read again until its exit
    record is there (30 s at most).
    """
    deadline = time.monotonic() + 30
    while True:
        found = _read_records(run_file)
        if not finished or found["exit_code"] is not None or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def _read_records(run_file: Path) -> dict:
    found = {"config": {}, "summary": {}, "history": [], "exit_code": None}
    for record in wandb_records(run_file):
        kind = record.WhichOneof("record_type")
        if kind == "run":
            found["name"], found["group"] = record.run.display_name, record.run.run_group
            found["id"], found["tags"] = record.run.run_id, list(record.run.tags)
            found["resume"] = record.run.resume  # asked to continue the run of that id
            for item in record.run.config.update:
                found["config"][item.key] = json.loads(item.value_json)
        elif kind == "summary":
            for item in record.summary.update:
                key = item.key or "/".join(item.nested_key)
                found["summary"][key] = json.loads(item.value_json)
        elif kind == "history":
            row = {
                item.key or "/".join(item.nested_key): item.value_json
                for item in record.history.item
            }
            found["history"].append({key: json.loads(value) for key, value in row.items()})
        elif kind == "exit":
            found["exit_code"] = record.exit.exit_code
    return found
