"""Time P0's training step on each fp32 kernel path, and check they agree to round-off.

Serves every trained experiment (their steps are P0-shaped GEMMs). The paths: oneMKL's
own dispatch (on AMD CPUs it takes its AVX2 kernels; ``ATTNLAB_MKL_AVX512=0``), its
AVX-512 kernels (attnlab's default where the CPU has them: :mod:`attnlab.mkl_avx512`),
and ``torch.compile`` (inductor) over the AVX-512 path, its GEMMs left to oneMKL or, with
``max-autotune``, to inductor's own C++ GEMM templates where they win. Each path runs in
a fresh process, the paths alternate across repeats, and the figures are medians (the
compile's first steps are untimed warm-up, from an empty Inductor cache, as on a fresh
machine); every path trains the same seeded batches, and its loss curve is compared with
the default's. Wall time per step and GFLOP/s need a quiet machine; the CPU time per
step is the steadier figure when other work shares the cores.

    python benchmarks/kernels.py --threads 2 --steps 10 --repeats 3
    python benchmarks/kernels.py --threads 1 --n-layer 12 --steps 4 --paths mkl-avx512
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

PATHS = {
    "mkl-default": {"ATTNLAB_MKL_AVX512": "0"},
    "mkl-avx512": {"ATTNLAB_MKL_AVX512": "1"},
    "compile": {"ATTNLAB_MKL_AVX512": "1", "KERNELS_COMPILE": "default"},
    "max-autotune": {"ATTNLAB_MKL_AVX512": "1", "KERNELS_COMPILE": "max-autotune"},
}


def child(threads: int, steps: int, warmup: int, n_layer: int) -> None:
    """One path in this process: print JSON with ms per step and the loss curve."""
    import attnlab  # noqa: F401 - before torch: it chooses oneMKL's kernels (mkl_avx512)

    # isort: split
    import numpy as np
    import torch
    from variant_kernels import train_steps

    from attnlab.mkl_avx512 import fp32_matmul_path
    from attnlab.models import LanguageModel, ModelConfig
    from attnlab.training import next_token_loss
    from attnlab.training.memory import tune_malloc

    tune_malloc()
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = LanguageModel(ModelConfig(n_layer=n_layer))
    loss_fn = next_token_loss
    if mode := os.environ.get("KERNELS_COMPILE"):
        loss_fn = torch.compile(next_token_loss, mode=mode, dynamic=False)
    cpu_marks: list[float] = []  # CPU seconds at each step's start: steadier than wall

    def step_fn(*args):
        cpu_marks.append(time.process_time())
        return loss_fn(*args)

    generator = torch.Generator().manual_seed(1)
    batches = [torch.randint(0, 1024, (64, 129), generator=generator) for _ in range(4)]
    schedule = [batches[i % len(batches)] for i in range(warmup + steps)]
    losses, times = train_steps(model, schedule, step_fn)
    a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
    gemm = [0.0] * 25
    for i in range(len(gemm)):  # the bare fp32 product: how near the cores' ceiling it runs
        began = time.perf_counter()
        a @ b
        gemm[i] = time.perf_counter() - began
    print(
        json.dumps(
            {
                "ms": 1e3 * statistics.median(times[warmup:]),
                "cpu_ms": 1e3 * statistics.median(np.diff(cpu_marks[warmup:])),
                "warmup_s": sum(times[:warmup]),
                "gemm_gflops": 2 * 1024**3 / statistics.median(gemm[5:]) / 1e9,
                "losses": losses,
                "matmul": fp32_matmul_path(),
                "parameters": sum(p.numel() for p in model.parameters()),
            }
        )
    )


def main() -> None:
    """Run each path in fresh processes, alternating, and print medians and agreement."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=2, help="torch threads per path")
    parser.add_argument("--steps", type=int, default=10, help="timed steps per run")
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps first")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each path")
    parser.add_argument(
        "--paths", nargs="+", choices=list(PATHS)[1:], default=list(PATHS)[1:],
        help="the paths timed beside mkl-default (default: all)",
    )  # fmt: skip
    parser.add_argument("--n-layer", type=int, default=1, help="blocks (E11's model: 12)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.threads, args.steps, args.warmup, args.n_layer)
        return
    results: dict[str, list[dict]] = {name: [] for name in ("mkl-default", *args.paths)}
    for repeat in range(args.repeats):
        order = list(results) if repeat % 2 == 0 else list(reversed(results))
        for name in order:
            # An empty Inductor cache: the warm-up holds a cold compile, as on a fresh machine.
            with tempfile.TemporaryDirectory() as cache:
                done = subprocess.run(
                    [sys.executable, __file__, "--child", *sys.argv[1:]],
                    env={**os.environ, **PATHS[name], "TORCHINDUCTOR_CACHE_DIR": cache},
                    capture_output=True,
                    text=True,
                    check=True,
                )
            results[name].append(json.loads(done.stdout.strip().splitlines()[-1]))
    base = statistics.median(r["ms"] for r in results["mkl-default"])
    base_cpu = statistics.median(r["cpu_ms"] for r in results["mkl-default"])
    reference = results["mkl-default"][0]["losses"]
    blocks = f"{args.n_layer} block{'s' if args.n_layer > 1 else ''}"
    print(
        f"P0 step, {blocks}, {args.threads} threads, {args.repeats} runs x {args.steps} steps "
        "(medians; GFLOP/s by 6 x parameters x tokens, from wall time)"
    )
    for name, runs in results.items():
        ms = statistics.median(r["ms"] for r in runs)
        cpu_ms = statistics.median(r["cpu_ms"] for r in runs)
        drift = max(
            abs(a - b) / abs(b)
            for run in runs
            for a, b in zip(run["losses"], reference, strict=True)
        )
        warmup_s = statistics.median(r["warmup_s"] for r in runs)
        print(
            f"{name:>12}: {ms:7.1f} ms/step x{base / ms:.2f}  CPU {cpu_ms:7.1f} ms "
            f"x{base_cpu / cpu_ms:.2f}  "
            f"{64 * 128 / ms * 1e3:9,.0f} tokens/s "
            f"{6 * runs[0]['parameters'] * 64 * 128 / ms / 1e6:5.0f} GFLOP/s  "
            f"warm-up {warmup_s:5.1f} s  "
            f"max rel. loss diff {drift:.1e}  ({runs[0]['matmul']}; 1024^3 product "
            f"{statistics.median(r['gemm_gflops'] for r in runs):.0f} GFLOP/s)"
        )


if __name__ == "__main__":
    main()
