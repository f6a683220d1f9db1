"""P0's training through the train stage's library call against a plain-PyTorch loop.

Serves every trained experiment: what a user gains by training through attnlab rather than
the plain eager loop every tutorial writes (nanoGPT's shape: one pre-norm block on SDPA, d
128, 4 heads, 64 windows of 128 tokens, AdamW). The plain loop runs as such a script runs:
torch imported first (oneMKL's own kernel choice), glibc's default allocator settings. Ours
is :func:`attnlab.training.train_variant` on P0's variant from params.yaml, in a process
that imported attnlab first (oneMKL's AVX-512 kernels where the CPU has them, the malloc
settings of ``training/memory.py``, the step's kernels as ``trainer`` says). Each side
runs in fresh processes, alternating; the figures are medians of the per-step wall and CPU
time (CPU time is the steadier on a shared machine; with one thread it is the step's own
work; a median leaves a compile's first step out), and the speed-up is plain / ours.

    python benchmarks/stage_vs_plain_torch.py --threads 2 --steps 40 --repeats 3
    python benchmarks/stage_vs_plain_torch.py --compile  # the compile's first step untimed
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _per_step(marks: list[float]) -> float:
    return statistics.median(b - a for a, b in zip(marks, marks[1:], strict=False))


def plain(steps: int, warmup: int, threads: int, tokens_file: Path) -> dict:
    """The tutorial loop: torch first, the reference block, random windows, AdamW."""
    import torch
    from model_step import ReferenceBlock, next_token_loss

    from attnlab.data.tokens import read_tokens
    from attnlab.mkl_avx512 import fp32_matmul_path

    torch.set_num_threads(threads)
    tokens = read_tokens(tokens_file)
    torch.manual_seed(0)
    model = ReferenceBlock()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    walls, cpus = [], []
    for _ in range(warmup + steps):
        starts = torch.randint(len(tokens) - 129, (64,))
        batch = torch.stack([tokens[s : s + 129] for s in starts.tolist()]).long()
        walls.append(time.perf_counter())
        cpus.append(time.process_time())
        loss = next_token_loss(model, batch[:, :-1], batch[:, 1:])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    loss.item()
    cpu = _per_step(cpus[warmup:])
    kernels = {"step": "eager", "fp32_matmul": fp32_matmul_path()}
    return {"wall": _per_step(walls[warmup:]), "cpu": cpu, "kernels": kernels}


def ours(steps: int, threads: int, tokens_file: Path, compile_step: bool) -> dict:
    """P0's variant through train_variant, timed by train_overhead's Lightning clock."""
    import attnlab  # noqa: F401 - before torch: it chooses oneMKL's kernels (mkl_avx512)

    # isort: split
    import torch
    from train_overhead import Clock, job_for

    from attnlab.training import FitOptions, train_variant

    torch.set_num_threads(threads)

    class StepClock(Clock):
        """Also the CPU time at each step's end: a median step leaves the compile out."""

        def on_train_start(self, *args: object) -> None:
            super().on_train_start(*args)
            self.cpus = [time.process_time()]

        def on_train_batch_end(self, *args: object) -> None:
            super().on_train_batch_end(*args)
            self.cpus.append(time.process_time())

    clock, job = StepClock(), job_for(steps)
    if compile_step:  # trainer.compile: true, whatever the run's length
        job = dataclasses.replace(job, trainer=job.trainer.model_copy(update={"compile": True}))
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        options = FitOptions(tokens_file, scratch / "runs", scratch, live_progress=False)
        result = train_variant(job, options, callbacks=[clock])
    figures = {"wall": _per_step(clock.ends), "cpu": _per_step(clock.cpus)}
    return {**figures, "kernels": result.metrics["kernels"]}


def main() -> None:
    """Alternate the two in fresh processes; print medians and the speed-up."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=40, help="timed steps per run")
    parser.add_argument("--warmup", type=int, default=3, help="untimed plain steps first")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each side")
    parser.add_argument("--threads", type=int, default=2, help="torch threads on both sides")
    parser.add_argument(
        "--tokens", type=Path, default=ROOT / "data" / "tokens" / "train.parquet",
        help="the train split (dvc repro tokenize)",
    )  # fmt: skip
    parser.add_argument(
        "--compile", action="store_true", help="ours through torch.compile (trainer.compile)"
    )
    parser.add_argument("--child", choices=("plain", "ours"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        os.environ.setdefault("WANDB_MODE", "disabled")
        figures = (
            plain(args.steps, args.warmup, args.threads, args.tokens)
            if args.child == "plain"
            else ours(args.steps, args.threads, args.tokens, args.compile)
        )
        print(json.dumps(figures))
        return
    runs: dict[str, list[dict]] = {"plain": [], "ours": []}
    for repeat in range(args.repeats):
        for side in ("plain", "ours") if repeat % 2 == 0 else ("ours", "plain"):
            done = subprocess.run(
                [sys.executable, __file__, "--child", side, *sys.argv[1:]],
                capture_output=True, text=True, check=True, cwd=Path(__file__).parent,
            )  # fmt: skip
            runs[side].append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(f"P0 shape, {args.threads} threads, {args.repeats} runs x {args.steps} steps (medians)")
    med = {s: {k: statistics.median(r[k] for r in runs[s]) for k in ("wall", "cpu")} for s in runs}
    for side in runs:
        print(
            f"{side:>6}: {med[side]['wall'] * 1e3:7.1f} ms/step wall, "
            f"{med[side]['cpu'] * 1e3:7.1f} ms/step CPU, {64 * 128 / med[side]['wall']:9,.0f} "
            f"tokens/s, kernels {runs[side][0]['kernels']}"
        )
    for clock in ("wall", "cpu"):
        print(f"speed-up plain/ours, {clock}: x{med['plain'][clock] / med['ours'][clock]:.2f}")


if __name__ == "__main__":
    main()
