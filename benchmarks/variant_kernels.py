"""Every trained variant's step, eager against ``torch.compile``: speed, compile time, agreement.

Serves ``trainer.compile: auto`` across the catalogue: a run long enough compiles its
step, so every variant's model must compile and train the eager numbers to round-off. For
each variant of params.yaml (its own model, batch and context), in this process: the
same seeded model and batches train ``--steps`` AdamW steps eagerly and compiled (after
the compile's own first steps, timed apart); the figures are the median step of each, the
ratio, the compile's seconds, and the relative difference of the two loss curves at the
first step and at most.
The two alternate variant by variant, so the machine's other work slows both alike.

    python benchmarks/variant_kernels.py --threads 1 --steps 6
    python benchmarks/variant_kernels.py --variants norm-pre positions-rope
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time
from pathlib import Path

import torch

from attnlab.config import load_params
from attnlab.models import LanguageModel
from attnlab.training.kernels import compiled_step
from attnlab.training.task import next_token_loss

ROOT = Path(__file__).resolve().parents[1]
WARMUP = 2  # compiled steps before timing: the compile, then a recompile-free step


def train_steps(model: LanguageModel, batches: list[torch.Tensor], loss_fn) -> tuple[list, list]:
    """Loss and seconds of one AdamW step per batch."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    losses, seconds = [], []
    for batch in batches:
        began = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model, batch[:, :-1], batch[:, 1:])
        loss.backward()
        optimizer.step()
        seconds.append(time.perf_counter() - began)
        losses.append(loss.item())
    return losses, seconds


def main() -> None:
    """Train each variant both ways and print one line per variant."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--steps", type=int, default=6, help="timed steps each way")
    parser.add_argument("--variants", nargs="*", default=None, help="default: every variant")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    params = load_params(ROOT / "params.yaml")
    names = args.variants or list(params.variants)
    compiled = compiled_step(next_token_loss)
    print(f"{args.threads} thread(s), {args.steps} timed steps, eager vs compiled (medians)")
    ratios = []
    for name in names:
        variant = params.variant(name)
        shape = (variant.train.batch_size, variant.model.block_size + 1)
        generator = torch.Generator().manual_seed(0)
        vocab = variant.model.vocab_size
        batches = [torch.randint(0, vocab, shape, generator=generator) for _ in range(args.steps)]
        torch.manual_seed(0)
        eager_model = LanguageModel(variant.model)
        compiled_model = copy.deepcopy(eager_model)
        eager_losses, eager_s = train_steps(eager_model, batches, next_token_loss)
        torch._dynamo.reset()  # each variant compiles from scratch: its own cold cost
        warm_losses, warm_s = train_steps(compiled_model, batches[:WARMUP], compiled)
        rest_losses, rest_s = train_steps(compiled_model, batches[WARMUP:], compiled)
        # The first step's difference is the kernels' round-off alone; later steps add
        # what training makes of it (Adam's update divides out small gradients' scale).
        drifts = [
            abs(a - b) / abs(b)
            for a, b in zip(warm_losses + rest_losses, eager_losses, strict=True)
        ]
        eager_ms = 1e3 * statistics.median(eager_s[WARMUP:])
        compiled_ms = 1e3 * statistics.median(rest_s)
        ratios.append(eager_ms / compiled_ms)
        print(
            f"{name:>24}: eager {eager_ms:7.1f} ms  compiled {compiled_ms:7.1f} ms  "
            f"x{eager_ms / compiled_ms:.2f}  compile {sum(warm_s):5.1f} s  "
            f"rel. loss diff: step 0 {drifts[0]:.1e}, max {max(drifts):.1e}",
            flush=True,
        )
    print(f"median speed-up over {len(ratios)} variants: x{statistics.median(ratios):.2f}")


if __name__ == "__main__":
    main()
