"""E14, one row: what one attention layer costs at length n, measured.

Two implementations of the same layer (fused q|k|v projection, 8 heads, W_o): ``naive``
materialises the (B, H, n, n) scores and then the weights, ``sdpa`` calls
`F.scaled_dot_product_attention`, which never holds the n x n matrix at once. A row times
the whole forward and, separately, its two projections; and it measures the forward's peak
memory: the CUDA allocator's high-water mark on a GPU, the process's resident-set
high-water mark (``VmHWM``) on a CPU. Each row can run in a fresh process
(:func:`run_isolated`), so a row's peak is its own and a row killed for memory cannot take
the sweep down with it.
"""

import dataclasses
import json
import math
import os
import platform
import signal
import statistics
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attnlab.errors import ParamsError
from attnlab.probes.seeding import derive_seed, generator

MIB = 2**20
FLOAT32_BYTES = 4

PEAK_METHODS = {
    "cpu": "process resident-set high-water mark (VmHWM, reset through /proc/self/clear_refs) "
    "during the forwards, minus the resident set before them; one fresh process per row",
    "cuda": "torch.cuda.max_memory_allocated during the forwards (peak stats reset before), "
    "minus the memory allocated before them; one fresh process per row",
}


def naive_attention(q: Tensor, k: Tensor, v: Tensor, causal: bool) -> Tensor:
    """Attention with the (B, H, n, n) scores and weights materialised, as written on paper.

    The scale and the mask are applied in place, so the peak is the two n x n matrices
    (scores, then weights) and not three.
    """
    T = q.shape[-2]
    scores = q @ k.transpose(-2, -1)  # (B, H, T, T)
    scores.mul_(1.0 / math.sqrt(q.shape[-1]))
    if causal:
        future = torch.ones(T, T, dtype=torch.bool, device=q.device).triu(1)  # (T, T)
        scores.masked_fill_(future, float("-inf"))
    weights = scores.softmax(dim=-1)  # (B, H, T, T)
    return weights @ v  # (B, H, T, D)


def sdpa_attention(q: Tensor, k: Tensor, v: Tensor, causal: bool) -> Tensor:
    """Attention by PyTorch's fused kernel (flash / memory-efficient where available)."""
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)  # (B, H, T, D)


IMPLEMENTATIONS: dict[str, Callable[[Tensor, Tensor, Tensor, bool], Tensor]] = {
    "naive": naive_attention,
    "sdpa": sdpa_attention,
}


class AttentionLayer(nn.Module):
    """One attention layer: q, k, v bias-free in one matmul, the heads, W_o with bias."""

    def __init__(self, d_model: int, n_head: int, implementation: str) -> None:
        super().__init__()
        self.n_head = n_head
        self.attend = IMPLEMENTATIONS[implementation]
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.out = nn.Linear(d_model, d_model)

    def forward(self, x: Tensor, causal: bool) -> Tensor:
        """Attend over ``x`` (B, T, C); return (B, T, C)."""
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=-1)  # (B, T, C) x3
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, H, T, D)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, H, T, D)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, H, T, D)
        y = self.attend(q, k, v, causal)  # (B, H, T, D)
        return self.out(y.transpose(1, 2).reshape(B, T, C))  # (B, T, C)

    def projections(self, x: Tensor) -> Tensor:
        """The two projections alone (W_o applied to ``x`` in place of the heads' output).

        Their cost grows as n d^2, the attention's as n^2 d: timing them apart shows
        where the time goes as n doubles.
        """
        self.qkv(x)  # (B, T, 3C)
        return self.out(x)  # (B, T, C)


@dataclass(frozen=True)
class CostCase:
    """Everything one row of E14 needs: the layer, the length, the device and the repeats."""

    implementation: str
    n_tokens: int
    d_model: int
    n_head: int
    batch: int
    causal: bool
    device: str
    warmup: int
    repeats: int
    seed: int

    @property
    def scores_mib(self) -> float:
        """The exact size of one (B, H, n, n) float32 score matrix, in MiB."""
        return self.batch * self.n_head * self.n_tokens**2 * FLOAT32_BYTES / MIB


@dataclass(frozen=True)
class Measurement:
    """What one row measured: median milliseconds, peak MiB, the row's own wall time."""

    total_ms: float
    projection_ms: float
    peak_mib: float
    row_s: float
    threads: int


def resolve_device(device: str) -> str:
    """``auto`` is ``cuda`` when a GPU is visible and ``cpu`` otherwise.

    Raises:
        ParamsError: ``cuda`` was asked for and no GPU is visible.
    """
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise ParamsError("cost.device: cuda, but torch sees no GPU")
    return device


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise RuntimeError(f"/proc/self/status has no {field} line")


class PeakMemory:
    """The peak memory of the code in a ``with`` block, above what was in use at its start."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.mib = float("nan")

    def __enter__(self) -> "PeakMemory":
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
            self._base = torch.cuda.memory_allocated(self.device)
            torch.cuda.reset_peak_memory_stats(self.device)
        else:
            self._base = _status_kib("VmRSS") * 1024
            Path("/proc/self/clear_refs").write_text("5")  # "5": reset VmHWM to VmRSS
        return self

    def __exit__(self, *exc: object) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
            peak = torch.cuda.max_memory_allocated(self.device)
        else:
            peak = _status_kib("VmHWM") * 1024
        self.mib = (peak - self._base) / MIB


def build_layer(case: CostCase) -> AttentionLayer:
    """The layer of ``case``, initialised from its seed without touching the global RNG."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(derive_seed(case.seed, "e14", "weights"))
        layer = AttentionLayer(case.d_model, case.n_head, case.implementation)
    return layer.to(case.device).eval()


def _median_ms(run: Callable[[], object], calls: int, device: torch.device) -> float:
    times = []
    for _ in range(calls):
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        start = time.perf_counter()
        run()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def measure_case(case: CostCase) -> Measurement:
    """Measure one row in this process: warm-up forwards, then the median of ``repeats``.

    Raises:
        torch.OutOfMemoryError: (or the CPU allocator's RuntimeError) when a row does not fit.
    """
    start = time.perf_counter()
    device = torch.device(case.device)
    g = generator(case.seed, "e14", "input", case.n_tokens)
    x = torch.randn(case.batch, case.n_tokens, case.d_model, generator=g).to(device)  # (B, T, C)
    layer = build_layer(case)
    with torch.inference_mode():
        with PeakMemory(device) as peak:
            for _ in range(case.warmup):  # first calls pay for kernel selection and page faults
                layer(x, case.causal)
            total = _median_ms(lambda: layer(x, case.causal), case.repeats, device)
        projection = _median_ms(lambda: layer.projections(x), case.repeats, device)
    row_s = time.perf_counter() - start
    return Measurement(total, projection, peak.mib, row_s, torch.get_num_threads())


def is_out_of_memory(error: BaseException) -> bool:
    """Whether ``error`` says an allocation did not fit (CUDA, the CPU allocator or Python)."""
    if isinstance(error, torch.OutOfMemoryError | MemoryError):
        return True
    return isinstance(error, RuntimeError) and "can't allocate memory" in str(error)


def worker_main() -> None:
    """Measure the row given as JSON on stdin; answer one JSON line on stdout.

    The answer is ``{"kind": "ok", "measurement": {...}}``, ``{"kind": "oom", "message": ...}``
    or ``{"kind": "error", "message": <traceback>}``; the parent decides what each means.
    """
    case = CostCase(**json.loads(sys.stdin.read()))
    try:
        answer = {"kind": "ok", "measurement": dataclasses.asdict(measure_case(case))}
    except Exception as error:
        oom = is_out_of_memory(error)
        message = str(error) if oom else traceback.format_exc()
        answer = {"kind": "oom" if oom else "error", "message": message}
    print(json.dumps(answer), flush=True)


_WORKER = "from attnlab.probes.cost import worker_main; worker_main()"


def run_isolated(case: CostCase) -> Measurement:
    """Measure one row in a fresh Python process: its own peak, its own failure.

    Raises:
        torch.OutOfMemoryError: the row ran out of memory, or its process was killed by
            SIGKILL, which on Linux is what the kernel's out-of-memory killer sends.
        RuntimeError: the row failed for any other reason (the worker's traceback inside).
    """
    done = subprocess.run(
        [sys.executable, "-c", _WORKER],
        input=json.dumps(dataclasses.asdict(case)),
        stdout=subprocess.PIPE,  # stderr passes through: the worker's warnings stay visible
        text=True,
        check=False,
    )
    where = f"{case.implementation} at n={case.n_tokens}"
    if done.returncode == -signal.SIGKILL:
        raise torch.OutOfMemoryError(
            f"{where}: worker killed by SIGKILL (the kernel's out-of-memory killer)"
        )
    lines = done.stdout.strip().splitlines()
    answer = json.loads(lines[-1]) if done.returncode == 0 and lines else {}
    if answer.get("kind") == "ok":
        return Measurement(**answer["measurement"])
    if answer.get("kind") == "oom":
        raise torch.OutOfMemoryError(f"{where}: {answer['message']}")
    detail = answer.get("message", done.stdout)
    raise RuntimeError(f"{where}: the worker failed (exit {done.returncode}):\n{detail}")


def device_memory_mib(device: str) -> float:
    """All the memory of ``device``, in MiB: the GPU's, or the machine's RAM (MemTotal)."""
    if device == "cuda":
        return torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory / MIB
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) * 1024 / MIB
    raise RuntimeError("/proc/meminfo has no MemTotal line")


def describe_environment(device: str) -> dict[str, str | int | float]:
    """The device, library versions and thread count a cost table was measured with."""
    if device == "cuda":
        name = torch.cuda.get_device_name()
    else:
        cpuinfo = Path("/proc/cpuinfo")
        models = [
            line.split(":", 1)[1].strip()
            for line in (cpuinfo.read_text().splitlines() if cpuinfo.exists() else [])
            if line.startswith("model name")
        ]
        name = models[0] if models else platform.processor() or "unknown cpu"
    return {
        "device": device,
        "device_name": name,
        "torch": torch.__version__,
        "cuda": torch.version.cuda or "none",
        "python": platform.python_version(),
        "threads": torch.get_num_threads(),
        "memory_mib": round(device_memory_mib(device)),
        # Other processes on the machine slow every row; the 1-minute load says how busy it was.
        "load_average_at_start": round(os.getloadavg()[0], 2),
        "dtype": "float32",
        "peak_method": PEAK_METHODS[device],
    }
