"""The figures of ``benchmarks/gpu_story.py``: training FLOP by 6·N·D, rates, utilisation.

Serves the whole catalogue retrained on one machine. Every training the run recorded (a
stage output in ``dvc.lock`` whose JSON holds ``steps``, ``tokens_seen``, ``params`` and
``wall_s``: ``train@``, ``winograd-train@`` and ``sweep-check@``) costs 6·N·D
floating-point operations, N its parameters and D the tokens it trained on (2·N·D forward,
4·N·D backward). Attention's context-length term, the evaluations and the sweeps' trials
(which record no tokens) are not counted, so the figures are a lower bound on the work
done. A run's rate is its process's: its FLOP over its own ``wall_s``, times the runs of a
seed group (``group_seeds``: they trained together, in one wall time); the aggregate is the total
over the fan-out's wall time, compared with the device's float32 peak (the pipeline trains
in float32 without TF32). Only the standard library and PyYAML are used: this module runs
before the carried wheels are installed.
"""

import csv
import json
import statistics
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TextIO

import yaml

RECORD_KEYS = {"steps", "tokens_seen", "params", "wall_s"}


@dataclass(frozen=True)
class Run:
    """One recorded training: its stage, its group (the stage without its seed), its figures."""

    stage: str
    group: str
    steps: int
    tokens_seen: int
    params: int
    wall_s: float
    tokens_per_s: float
    device: str
    shared: int = 1  # the runs of its seed group, which trained in one process at once

    @property
    def flop(self) -> float:
        """6·N·D: the training's floating-point operations, forward and backward."""
        return 6.0 * self.params * self.tokens_seen

    @property
    def tflops(self) -> float:
        """The rate its process achieved over its wall time, in TFLOP/s (a group's: all runs)."""
        return self.shared * self.flop / self.wall_s / 1e12 if self.wall_s > 0 else 0.0


def recorded_runs(root: Path) -> list[Run]:
    """Every training recorded in ``root``'s ``dvc.lock``, in the lock's order."""
    lock = root / "dvc.lock"
    if not lock.is_file():
        return []
    runs = []
    for stage, entry in (yaml.safe_load(lock.read_text()) or {}).get("stages", {}).items():
        for out in entry.get("outs", []):
            path = root / out["path"]
            if path.suffix != ".json" or not path.is_file():
                continue
            record = json.loads(path.read_text())
            if RECORD_KEYS <= record.keys():
                runs.append(_run(stage, record))
    return runs


def _run(stage: str, record: dict) -> Run:
    # A matrix stage is named `<stage>@<item>-<seed>`: its replicas differ in the seed alone.
    seed = f"-{record['seed']}" if "seed" in record else ""
    group = stage.removesuffix(seed) if seed and stage.endswith(seed) else stage
    return Run(
        stage=stage,
        group=group,
        steps=int(record["steps"]),
        tokens_seen=int(record["tokens_seen"]),
        params=int(record["params"]),
        wall_s=float(record["wall_s"]),
        tokens_per_s=float(record.get("tokens_per_s") or 0.0) * len(record.get("group_seeds", [0])),
        device=str(record.get("device", "?")),
        shared=len(record.get("group_seeds", [0])),
    )


def group_lines(runs: list[Run]) -> list[dict]:
    """Per group of replicas: runs, steps, and the mean process's tokens/s, TFLOP/s, wall_s."""
    groups: dict[str, list[Run]] = {}
    for run in runs:
        groups.setdefault(run.group, []).append(run)
    return [
        {
            "group": name,
            "runs": len(members),
            "steps": sorted({run.steps for run in members}),
            "tokens_per_s": statistics.fmean(run.tokens_per_s for run in members),
            "tflops": statistics.fmean(run.tflops for run in members),
            "wall_s": statistics.fmean(run.wall_s for run in members),
        }
        for name, members in sorted(groups.items())
    ]


def gpu_samples(path: Path) -> dict | None:
    """Mean utilisation and peak memory of ``nvidia-smi``'s CSV samples (None: no sample).

    Each line is ``utilization.gpu, memory.used`` of one GPU at one moment; lines that are
    not two numbers (a driver message) are skipped.
    """
    if not path.is_file():
        return None
    utilisation, memory = [], []
    for row in csv.reader(path.read_text().splitlines()):
        try:
            util, used = (float(value) for value in row)
        except ValueError:
            continue
        utilisation.append(util)
        memory.append(used)
    if not utilisation:
        return None
    return {
        "samples": len(utilisation),
        "mean_utilisation_pct": statistics.fmean(utilisation),
        "max_memory_mib": max(memory),
    }


def summary(runs: list[Run], fan_out_wall_s: float, peak: dict, gpu: dict | None) -> dict:
    """The story's figures as one JSON-ready mapping.

    Args:
        runs: The recorded trainings.
        fan_out_wall_s: Wall seconds of ``attnlab repro``.
        peak: ``tflops`` (None: no figure) and ``basis``, what the peak is.
        gpu: :func:`gpu_samples`'s figures, or ``{"skipped": why}``.
    """
    total = sum(run.flop for run in runs)
    aggregate = total / fan_out_wall_s / 1e12 if fan_out_wall_s > 0 else 0.0
    return {
        "fan_out_wall_s": fan_out_wall_s,
        "runs": [{**asdict(run), "flop": run.flop, "tflops": run.tflops} for run in runs],
        "groups": group_lines(runs),
        "total_flop": total,
        "aggregate_tflops": aggregate,
        "peak": peak,
        "peak_fraction": aggregate / peak["tflops"] if peak.get("tflops") else None,
        "gpu": gpu,
    }


def print_summary(figures: dict, out: TextIO) -> None:
    """The figures as the terminal shows them: one line per group, then the totals."""
    header = f"{'group':<40} {'runs':>4} {'steps':>11} {'tokens/s':>10} {'TFLOP/s':>8}"
    print(f"\n{header} {'wall_s':>8}", file=out)
    for line in figures["groups"]:
        first, last = line["steps"][0], line["steps"][-1]
        steps = str(first) if first == last else f"{first}-{last}"
        print(
            f"{line['group']:<40} {line['runs']:>4} {steps:>11} {line['tokens_per_s']:>10.0f} "
            f"{line['tflops']:>8.4f} {line['wall_s']:>8.1f}",
            file=out,
        )
    devices = Counter(run["device"] for run in figures["runs"])
    on = ", ".join(f"{device} x{count}" for device, count in devices.items()) or "nothing"
    print(
        f"recorded trainings: {len(figures['runs'])}, on {on} (per group: mean per run)", file=out
    )
    print(f"total training FLOP (6·N·D): {figures['total_flop']:.4g}", file=out)
    print(
        f"aggregate TFLOP/s over the fan-out's wall ({figures['fan_out_wall_s']:.1f} s): "
        f"{figures['aggregate_tflops']:.4f}",
        file=out,
    )
    peak, fraction = figures["peak"], figures["peak_fraction"]
    peak_text = f"{peak['tflops']:.4g} TFLOP/s" if peak.get("tflops") else "none"
    shown = f"{fraction:.2%}" if fraction is not None else "n/a"
    print(f"fraction of peak: {shown} (peak {peak_text}: {peak['basis']})", file=out)
    gpu = figures["gpu"] or {}
    if "mean_utilisation_pct" in gpu:
        print(
            f"mean GPU utilisation: {gpu['mean_utilisation_pct']:.1f} % over {gpu['samples']} "
            f"samples, peak memory {gpu['max_memory_mib']:.0f} MiB",
            file=out,
        )
    else:
        print(f"mean GPU utilisation: n/a ({gpu.get('skipped', 'no sample')})", file=out)
