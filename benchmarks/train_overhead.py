"""What the train stage's machinery costs: our Lightning path against a bare PyTorch loop.

Issue 4's speed check: training the full one-block P0 model (477,696 parameters, 64
windows of 128 tokens) through :func:`attnlab.training.train_variant` (Lightning's Trainer,
our callbacks, checkpoints, W&B as the stage resolves it) must cost less than 5 % over a
hand-written loop that trains the same model on the same batches (the same
``draw_windows`` of the same steps) with the same AdamW and schedule.

Runs alternate (bare, ours, then ours, bare, ...) after one warm-up of each, so a noisy
shared machine slows both alike; the figures are medians of per-repeat ratios: the
training loop's wall time (first step to last, the throughput of a long run), its CPU
time (steadier when other processes compete for the cores), and the whole
``Trainer.fit`` (with Lightning's per-run set-up, which a 3000-step run amortises), and
the median step (the time between the ends of consecutive steps: other processes' bursts
only ever add time, so the median step is the steadiest figure on a shared machine).
Both runs end with the same weights, which the script checks bit for bit: it is the
same computation, with and without the machinery.

    python benchmarks/train_overhead.py --steps 30 --repeats 5
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import tempfile
import time
from pathlib import Path

import lightning.pytorch as pl
import torch

from attnlab.config import load_params
from attnlab.data.batches import draw_windows
from attnlab.data.tokens import read_tokens
from attnlab.models import LanguageModel
from attnlab.training import FitOptions, TrainJob, next_token_loss, train_variant, warmup_factor
from attnlab.training.memory import tune_malloc

ROOT = Path(__file__).resolve().parents[1]
VARIANT = "ladder-layernorm"  # the full one-block transformer: P0's model


def job_for(steps: int) -> TrainJob:
    """The P0 variant from the real params.yaml, at exactly ``steps`` steps (no warmup)."""
    job = TrainJob.from_params(load_params(ROOT / "params.yaml"), VARIANT)
    return dataclasses.replace(job, steps=steps, warmup_steps=0)


class Clock(pl.Callback):
    """Wall and CPU seconds from the first step to the end of the last one, and each step."""

    def on_train_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        """Start both clocks right before the first step."""
        self.cpu = time.process_time()
        self.ends = [time.perf_counter()]

    def on_train_batch_end(self, trainer: pl.Trainer, *args: object) -> None:
        """Note when each step ended."""
        self.ends.append(time.perf_counter())

    def on_train_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        """Stop both clocks after the last step (and the last loss flush)."""
        self.wall = time.perf_counter() - self.ends[0]
        self.cpu = time.process_time() - self.cpu


def _median_step(ends: list[float]) -> float:
    return statistics.median(b - a for a, b in zip(ends, ends[1:], strict=False))


def bare_loop(job: TrainJob, tokens: torch.Tensor) -> tuple[dict[str, float], LanguageModel]:
    """Train with nothing but torch; wall and CPU seconds of the loop, and the model."""
    pl.seed_everything(job.seed, verbose=False)
    model = LanguageModel(job.variant.model)
    recipe = job.variant.train
    opt = torch.optim.AdamW(
        model.parameters(),
        lr=recipe.lr,
        betas=tuple(recipe.betas),
        weight_decay=recipe.weight_decay,
    )
    schedule = torch.optim.lr_scheduler.LambdaLR(opt, warmup_factor(job.warmup_steps))
    T, B = job.variant.model.block_size, recipe.batch_size
    cpu, ends = time.process_time(), [time.perf_counter()]
    for step in range(job.steps):
        batch = draw_windows(tokens, T, B, job.seed, step)
        loss = next_token_loss(model, batch.x, batch.y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        schedule.step()
        ends.append(time.perf_counter())
    loss.item()  # the one host sync, as the Lightning path's last flush
    wall = time.perf_counter() - ends[0]
    times = {"loop": wall, "cpu": time.process_time() - cpu, "step": _median_step(ends)}
    times["fit"] = wall
    return times, model


def lightning_path(
    job: TrainJob, tokens_file: Path, scratch: Path
) -> tuple[dict[str, float], LanguageModel]:
    """Train through the stage's library call.

    Returns the loop's wall and CPU seconds, the whole ``Trainer.fit`` (set-up and
    tear-down included), and the model.
    """
    clock = Clock()
    options = FitOptions(tokens_file, scratch / "runs", scratch, live_progress=False)
    result = train_variant(job, options, callbacks=[clock])
    times = {"loop": clock.wall, "cpu": clock.cpu, "step": _median_step(clock.ends)}
    times["fit"] = result.metrics["wall_s"]
    return times, result.model


def _same(a: LanguageModel, b: LanguageModel) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def main() -> None:
    """Print each repeat's times and the median ratios of ours over bare."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=30, help="steps per run")
    parser.add_argument("--repeats", type=int, default=5, help="timed pairs (median taken)")
    parser.add_argument(
        "--tokens",
        type=Path,
        default=ROOT / "data" / "tokens" / "train.parquet",
        help="the train split (run `dvc repro tokenize` first)",
    )
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: all)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    os.environ.setdefault("WANDB_SILENT", "true")
    tune_malloc()  # as train_variant does: both paths run with the same allocator settings
    job = job_for(args.steps)
    tokens = read_tokens(args.tokens)
    tokens_per_run = job.steps * job.tokens_per_step
    print(
        f"{VARIANT}: {job.steps} steps of {job.tokens_per_step:,} tokens, threads "
        f"{torch.get_num_threads()}, W&B {os.environ.get('WANDB_MODE', 'as resolved')}"
    )
    ratios: dict[str, list[float]] = {"step": [], "loop": [], "cpu": [], "fit": []}
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        bare_loop(job, tokens)  # warm-up: allocator, kernels, first page faults
        lightning_path(job, args.tokens, scratch)
        for repeat in range(args.repeats):
            order = ("bare", "ours") if repeat % 2 == 0 else ("ours", "bare")
            times, models = {}, {}
            for which in order:
                if which == "bare":
                    times[which], models[which] = bare_loop(job, tokens)
                else:
                    times[which], models[which] = lightning_path(job, args.tokens, scratch)
            for key in ratios:
                ratios[key].append(times["ours"][key] / times["bare"][key])
            bare, ours = times["bare"], times["ours"]
            print(
                f"repeat {repeat}: median step bare {bare['step'] * 1e3:.1f} ms "
                f"ours {ours['step'] * 1e3:.1f} ms; loop bare {bare['loop']:.2f} s "
                f"({tokens_per_run / bare['loop']:,.0f} tok/s) ours {ours['loop']:.2f} s "
                f"({tokens_per_run / ours['loop']:,.0f} tok/s); CPU bare {bare['cpu']:.2f} s "
                f"ours {ours['cpu']:.2f} s; whole fit {ours['fit']:.2f} s; "
                f"same weights {_same(models['bare'], models['ours'])}"
            )
    for key, label in (
        ("step", "median step, wall"),
        ("loop", "training loop, wall"),
        ("cpu", "training loop, CPU time"),
        ("fit", "whole Trainer.fit, wall"),
    ):
        median = statistics.median(ratios[key])
        print(f"median ours/bare, {label}: {median:.3f} ({(median - 1) * 100:+.1f} %)")


if __name__ == "__main__":
    main()
