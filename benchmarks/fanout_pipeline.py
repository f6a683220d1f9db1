"""The pipeline at a small budget, serial ``dvc repro`` against ``attnlab repro``.

Serves the quick pass over the whole catalogue. Two fresh clones of this checkout get the
same ``-S`` overrides (default ``budget.scale=0.01``, applied with DVC's override code and
committed, so both start from the same baseline); one runs ``dvc repro`` (one stage at a
time, torch on every core), the other ``attnlab repro`` (one stage per core, one thread
each). They run one after the other on the same machine; the figure is the ratio of
wall times. W&B is disabled in both: it is the same cost per stage either way.

    python benchmarks/fanout_pipeline.py                       # the whole pipeline (long)
    python benchmarks/fanout_pipeline.py --targets evaluate@ladder-mlp evaluate@depth-2
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def clone_project(into: Path, overrides: list[str]) -> Path:
    """Clone this checkout into ``into`` with ``overrides`` committed and no dvc.lock."""
    subprocess.run(["git", "clone", "-q", str(ROOT), str(into)], check=True)
    if overrides:
        from dvc.utils.hydra import apply_overrides

        apply_overrides(into / "params.yaml", overrides)
        subprocess.run(
            [
                "git",
                "-c",
                "user.name=bench",
                "-c",
                "user.email=bench@invalid",
                "commit",
                "-qam",
                "benchmark params",
            ],
            cwd=into,
            check=True,
        )
    (into / "dvc.lock").unlink(missing_ok=True)  # every stage runs
    return into


def timed_run(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    """Wall seconds of ``command``; its output is kept and shown only if it fails."""
    began = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return time.perf_counter() - began


def main() -> None:
    """Clone twice, run serial then fan-out, print both wall times and the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--set-param",
        "-S",
        action="append",
        default=None,
        help="overrides for both runs (default budget.scale=0.01)",
    )
    parser.add_argument("--targets", nargs="*", default=[], help="stages (default: all)")
    parser.add_argument("--jobs", type=int, default=None, help="the fan-out's --jobs")
    parser.add_argument("--target-min", type=float, default=8.0, help="the issue's target")
    args = parser.parse_args()
    overrides = args.set_param or ["budget.scale=0.01"]
    env = {**os.environ, "WANDB_MODE": "disabled", "DVC_NO_ANALYTICS": "1"}
    env.pop("OMP_NUM_THREADS", None)
    with tempfile.TemporaryDirectory(prefix="attnlab-fanout-bench-") as tmp:
        serial_root = clone_project(Path(tmp) / "serial", overrides)
        fanout_root = clone_project(Path(tmp) / "fanout", overrides)
        # Each clone runs its own code, not whatever the environment's attnlab points at.
        runs = {
            "serial": {
                **env,
                "ATTNLAB_RUN_ROOT": f"{tmp}/runs-serial",
                "PYTHONPATH": str(serial_root / "src"),
            },
            "fanout": {
                **env,
                "ATTNLAB_RUN_ROOT": f"{tmp}/runs-fanout",
                "PYTHONPATH": str(fanout_root / "src"),
            },
        }
        jobs = ["--jobs", str(args.jobs)] if args.jobs else []
        serial = timed_run([str(BIN / "dvc"), "repro", *args.targets], serial_root, runs["serial"])
        fanout = timed_run(
            [str(BIN / "attnlab"), "repro", *jobs, *args.targets], fanout_root, runs["fanout"]
        )
    what = " ".join(args.targets) or "the whole pipeline"
    print(f"{what}, {' '.join(overrides)}, {os.cpu_count()} cores")
    print(f"serial dvc repro:    {serial / 60:6.1f} min")
    print(f"attnlab repro:       {fanout / 60:6.1f} min  (x{serial / fanout:.2f})")
    if not args.targets:
        verdict = "met" if fanout <= 60 * args.target_min else "NOT met"
        print(f"target {args.target_min} min: {verdict}")


if __name__ == "__main__":
    main()
