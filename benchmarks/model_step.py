"""Time a training step of our P0 model against a plain block written on SDPA.

Issue 3's speed check: the composable `LanguageModel` must cost no more than 10 % over a
hand-written one-block transformer of the same shapes and parameter count (477,696), on
the CPU, for forward + backward + AdamW step at P0 shape (64 windows of 128 tokens).

With ``--compile``, ours trains through ``torch.compile`` (what ``trainer.compile`` picks
for a long run) against the reference left eager, PyTorch's default: the fast path's
speed-up over a plain block in a bare loop (the target is x1.3).

Runs are interleaved (ours, reference, then reference, ours, ...) after a warm-up (which
holds the compile), so a noisy shared machine slows both alike; the figure is the median
of the per-repeat ratios.

    python benchmarks/model_step.py --steps 10 --repeats 9
    python benchmarks/model_step.py --compile --threads 1
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attnlab.models import LanguageModel, ModelConfig
from attnlab.training.kernels import compiled_step

V, D, H, T, B = 1024, 128, 4, 128, 64  # P0: vocab, width, heads, context, batch


class ReferenceBlock(nn.Module):
    """A pre-norm one-block transformer written straight on SDPA, nothing configurable."""

    def __init__(self) -> None:
        super().__init__()
        self.tok, self.pos = nn.Embedding(V, D), nn.Embedding(T, D)
        self.ln1, self.ln2, self.ln_f = nn.LayerNorm(D), nn.LayerNorm(D), nn.LayerNorm(D)
        self.qkv, self.out = nn.Linear(D, 3 * D, bias=False), nn.Linear(D, D)
        self.fc, self.proj = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)
        self.head = nn.Linear(D, V)

    def forward(self, idx: Tensor) -> Tensor:
        """Return logits (B, T, V) for token ids (B, T)."""
        b, t = idx.shape
        x = self.tok(idx) + self.pos.weight[:t]  # (B, T, C)
        q, k, v = self.qkv(self.ln1(x)).split(D, dim=-1)  # (B, T, C) each
        q, k, v = (z.view(b, t, H, D // H).transpose(1, 2) for z in (q, k, v))  # (B, H, T, D)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, H, T, D)
        x = x + self.out(y.transpose(1, 2).reshape(b, t, D))  # (B, T, C)
        x = x + self.proj(F.gelu(self.fc(self.ln2(x))))  # (B, T, C)
        return self.head(self.ln_f(x))  # (B, T, V)


def next_token_loss(model: nn.Module, x: Tensor, y: Tensor) -> Tensor:
    """Mean cross-entropy of the logits of ``x`` against ``y``."""
    return F.cross_entropy(model(x).flatten(0, 1), y.flatten())


def seconds_per_step(
    model: nn.Module, opt: torch.optim.Optimizer, batch: Tensor, steps: int, loss_fn=next_token_loss
) -> float:
    """Run `steps` training steps on one batch; return the mean wall time per step."""
    start = time.perf_counter()
    for _ in range(steps):
        loss = loss_fn(model, batch[:, :-1], batch[:, 1:])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return (time.perf_counter() - start) / steps


def main() -> None:
    """Parse the options, time both models interleaved, and print the medians and ratio."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--steps",
        type=int,
        default=10,
        help="training steps (forward, backward, AdamW on 64 x 128 tokens) per timed run",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=9,
        help="timed runs of each model, interleaved; the figures are medians over them",
    )
    parser.add_argument(
        "--warmup", type=int, default=5, help="untimed warm-up steps of each model before timing"
    )
    parser.add_argument(
        "--max-ratio",
        type=float,
        default=1.10,
        help="exit 1 if the median ratio of seconds per step, ours/reference, exceeds this",
    )
    parser.add_argument(
        "--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)"
    )
    parser.add_argument(
        "--compile",
        action="store_true",
        help="our step through torch.compile (trainer.compile's path), against the "
        "reference eager; the figure to reach is then a speed-up of --min-speedup",
    )
    parser.add_argument("--min-speedup", type=float, default=1.3, help="with --compile")
    args = parser.parse_args()
    if args.threads is not None:
        torch.set_num_threads(args.threads)

    torch.manual_seed(0)
    ours, reference = LanguageModel(ModelConfig()), ReferenceBlock()
    sizes = [sum(p.numel() for p in m.parameters()) for m in (ours, reference)]
    assert sizes[0] == sizes[1] == 477_696, sizes
    ours_loss = compiled_step(next_token_loss) if args.compile else next_token_loss
    runs = {
        "ours": (ours, torch.optim.AdamW(ours.parameters(), lr=1e-3), ours_loss),
        "reference": (
            reference,
            torch.optim.AdamW(reference.parameters(), lr=1e-3),
            next_token_loss,
        ),
    }
    batch = torch.randint(0, V, (B, T + 1))
    for model, opt, loss_fn in runs.values():
        seconds_per_step(model, opt, batch, args.warmup, loss_fn)

    times: dict[str, list[float]] = {name: [] for name in runs}
    for r in range(args.repeats):
        order = list(runs) if r % 2 == 0 else list(reversed(runs))  # alternate who goes first
        for name in order:
            model, opt, loss_fn = runs[name]
            times[name].append(seconds_per_step(model, opt, batch, args.steps, loss_fn))

    ratio = statistics.median(
        o / ref for o, ref in zip(times["ours"], times["reference"], strict=True)
    )
    print(
        f"threads {torch.get_num_threads()}, batch {B} x {T} tokens, {args.repeats} repeats "
        f"of {args.steps} steps (times in ms per training step)"
    )
    for name, seconds in times.items():
        print(
            f"{name:>9}: median {1e3 * statistics.median(seconds):7.2f} ms  "
            f"(min {1e3 * min(seconds):.2f}, max {1e3 * max(seconds):.2f})"
        )
    if args.compile:
        print(
            f"median speed-up, reference/ours compiled: x{1 / ratio:.2f} "
            f"(target x{args.min_speedup:.2f})"
        )
        raise SystemExit(0 if 1 / ratio >= args.min_speedup else 1)
    print(f"median ratio ours/reference: {ratio:.3f} (limit {args.max_ratio:.2f})")
    raise SystemExit(0 if ratio <= args.max_ratio else 1)


if __name__ == "__main__":
    main()
