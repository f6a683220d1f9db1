"""Time P0's training step on each fp32 kernel path, and check they agree to round-off.

Serves every trained experiment (their steps are P0-shaped GEMMs). The paths: MKL's
default dispatch (on AMD CPUs it takes its AVX2 kernels), MKL's AVX-512 kernels
(``MKL_ENABLE_INSTRUCTIONS=AVX512``, read when MKL loads, so it is set before torch is
imported), and ``torch.compile`` (inductor) over the default path. Each path runs in a
fresh process, the paths alternate across repeats, and the figures are medians; every
path trains the same seeded batches, and its loss curve is compared with the default's.

    python benchmarks/kernels.py --threads 2 --steps 10 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

PATHS = {
    "mkl-default": {"MKL_ENABLE_INSTRUCTIONS": ""},
    "mkl-avx512": {"MKL_ENABLE_INSTRUCTIONS": "AVX512"},
    "compile": {"MKL_ENABLE_INSTRUCTIONS": "", "KERNELS_COMPILE": "1"},
}


def child(threads: int, steps: int, warmup: int) -> None:
    """One path in this process: print JSON with ms per step and the loss curve."""
    import torch
    from variant_kernels import train_steps

    from attnlab.models import LanguageModel, ModelConfig
    from attnlab.training import next_token_loss
    from attnlab.training.memory import tune_malloc

    tune_malloc()
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = LanguageModel(ModelConfig())
    step_fn = next_token_loss
    if os.environ.get("KERNELS_COMPILE"):
        step_fn = torch.compile(next_token_loss)
    generator = torch.Generator().manual_seed(1)
    batches = [torch.randint(0, 1024, (64, 129), generator=generator) for _ in range(4)]
    schedule = [batches[i % len(batches)] for i in range(warmup + steps)]
    losses, times = train_steps(model, schedule, step_fn)
    mkl = torch.backends.mkl.is_available()
    print(json.dumps({"ms": 1e3 * statistics.median(times[warmup:]), "losses": losses, "mkl": mkl}))


def main() -> None:
    """Run each path in fresh processes, alternating, and print medians and agreement."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=2, help="torch threads per path")
    parser.add_argument("--steps", type=int, default=10, help="timed steps per run")
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps first")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each path")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.threads, args.steps, args.warmup)
        return
    results: dict[str, list[dict]] = {name: [] for name in PATHS}
    for repeat in range(args.repeats):
        order = list(PATHS) if repeat % 2 == 0 else list(reversed(PATHS))
        for name in order:
            env = {**os.environ, **PATHS[name]}
            env = {k: v for k, v in env.items() if v != ""}
            done = subprocess.run(
                [sys.executable, __file__, "--child", *sys.argv[1:]],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            results[name].append(json.loads(done.stdout.strip().splitlines()[-1]))
    base = statistics.median(r["ms"] for r in results["mkl-default"])
    reference = results["mkl-default"][0]["losses"]
    print(f"P0 step, {args.threads} threads, {args.repeats} runs x {args.steps} steps (medians)")
    for name, runs in results.items():
        ms = statistics.median(r["ms"] for r in runs)
        drift = max(
            abs(a - b) / abs(b)
            for run in runs
            for a, b in zip(run["losses"], reference, strict=True)
        )
        print(
            f"{name:>12}: {ms:8.1f} ms/step  x{base / ms:.2f} vs default  "
            f"{64 * 128 / ms * 1e3:9,.0f} tokens/s  max rel. loss diff {drift:.1e}"
        )


if __name__ == "__main__":
    main()
