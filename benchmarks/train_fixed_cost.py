"""Where a small train stage's seconds go beyond its training steps.

Serves every trained experiment at small budgets (the quick pass, the test suite), where
a train stage trains for seconds and starts for many more. In a fresh clone of this
checkout (tokenized once), one variant's train stage runs, alternating across repeats:

- ``--help``: the stage's start-up alone (its imports and the command line);
- at two budgets (``--scales``, e.g. 30 and 90 steps), W&B offline: the wall time's
  growth between them is the price of a step, and what is left at zero steps
  (``wall = fixed + steps x step``) is the stage's fixed cost;
- the smaller budget with W&B disabled: the difference is W&B's start and finish;
- the smaller budget through ``dvc repro --single-item --force``: DVC's own share
  (collecting the pipeline, hashing the outputs, writing dvc.lock).

The fixed cost holds the val/ppl curve (about ``steps / every_steps`` points at any
budget, so its cost does not shrink with the budget) and Lightning's set-up. Figures are
medians of wall and of CPU seconds (the stage and every process it waited for); the
configurations alternate, so the machine's other work slows each alike, and CPU seconds
are the steadier figure when other work competes for the cores.

    python benchmarks/train_fixed_cost.py --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
from pathlib import Path

from fanout_pipeline import BIN, clone_project, timed_run

from attnlab.config.files import read_params_mapping

TARGET_S = 8.0  # the bound on a train stage's fixed cost on this CPU


def main() -> None:
    """Clone, tokenize, time the stage's configurations alternately, print the breakdown."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", default="ladder-layernorm", help="the variant trained")
    parser.add_argument("--scales", nargs=2, type=float, default=[0.01, 0.03])
    parser.add_argument("--repeats", type=int, default=3, help="runs of each configuration")
    args = parser.parse_args()
    small, large = sorted(args.scales)
    env = {**os.environ, "DVC_NO_ANALYTICS": "1", "WANDB_MODE": "offline"}
    with tempfile.TemporaryDirectory(prefix="attnlab-fixed-cost-") as tmp:
        root = clone_project(Path(tmp) / "project", [f"budget.scale={small}"])
        # The clone's own code, not whatever the environment's attnlab install points at.
        env.update(ATTNLAB_RUN_ROOT=f"{tmp}/runs", PYTHONPATH=str(root / "src"))
        timed_run([str(BIN / "dvc"), "repro", "tokenize"], root, env)
        seed = _first_seed(root)
        larger = root / "params-large.yaml"
        larger.write_text(
            (root / "params.yaml").read_text().replace(f"scale: {small}", f"scale: {large}")
        )
        train = [sys.executable, "pipeline/train.py", "--variant", args.variant, "--seed", seed]
        configurations = {
            "help": (train + ["--help"], env),
            "small": (train, env),
            "large": (train + ["--params", larger.name], env),
            "small, W&B disabled": (train, {**env, "WANDB_MODE": "disabled"}),
            "small, dvc repro": (
                [
                    str(BIN / "dvc"),
                    "repro",
                    "--single-item",
                    "--force",
                    f"train@{args.variant}-{seed}",
                ],
                env,
            ),
        }
        walls: dict[str, list[float]] = {name: [] for name in configurations}
        cpus: dict[str, list[float]] = {name: [] for name in configurations}
        steps: dict[str, int] = {}
        for repeat in range(args.repeats):
            order = list(configurations) if repeat % 2 == 0 else list(reversed(configurations))
            for name in order:
                command, run_env = configurations[name]
                before = _children_cpu()
                walls[name].append(timed_run(command, root, run_env))
                cpus[name].append(_children_cpu() - before)
                if name in ("small", "large"):
                    steps[name] = _steps(root, args.variant, seed)
    print(f"train@{args.variant}-{seed}, {args.repeats} runs each, medians, {os.cpu_count()} cores")
    print(f"  {'':<22} {'wall s':>8} {'CPU s':>8}   (wall min-max)")
    for name in configurations:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        spread = f"{min(walls[name]):.1f}-{max(walls[name]):.1f}"
        print(f"  {name:<22} {wall:8.1f} {cpu:8.1f}   ({spread})")
    for label, seconds in (("wall", walls), ("CPU", cpus)):
        _breakdown(label, {name: statistics.median(v) for name, v in seconds.items()}, steps)


def _breakdown(label: str, median: dict[str, float], steps: dict[str, int]) -> None:
    """Split the small run's ``label`` seconds into its steps and its fixed parts."""
    per_step = (median["large"] - median["small"]) / (steps["large"] - steps["small"])
    fixed = median["small"] - steps["small"] * per_step
    wandb = median["small"] - median["small, W&B disabled"]
    verdict = (
        ""
        if label != "wall"
        else f" (target {TARGET_S:.0f} s: {'met' if fixed <= TARGET_S else 'NOT met'})"
    )
    print(
        f"{label}: a step {per_step:.3f} s ({steps['small']} and {steps['large']} steps); "
        f"fixed cost {fixed:.1f} s{verdict}"
    )
    print(f"  start-up (imports, command line) {median['help']:5.1f} s")
    print(f"  W&B offline start and finish     {wandb:5.1f} s")
    print(
        f"  the rest (params, Lightning set-up, val/ppl curve, outputs) "
        f"{fixed - median['help'] - wandb:5.1f} s"
    )
    dvc = median["small, dvc repro"] - median["small"]
    print(f"  DVC's own share on top, through dvc repro: {dvc:5.1f} s")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _first_seed(root: Path) -> str:

    return str(read_params_mapping(root / "params.yaml")["seeds"][0])


def _steps(root: Path, variant: str, seed: str) -> int:
    record = root / "reports" / "metrics" / variant / f"seed-{seed}" / "train.json"
    return json.loads(record.read_text())["steps"]


if __name__ == "__main__":
    main()
