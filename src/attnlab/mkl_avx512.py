"""Let oneMKL run its AVX-512 fp32 kernels on AMD CPUs that have AVX-512.

PyTorch's CPU wheels send fp32 matrix products (every ``Linear``, the attention scores)
to oneMKL. oneMKL picks its kernels by CPU vendor before features: on an AMD CPU it takes
its AVX2 kernels even where the cores run AVX-512 (Zen 4, Zen 5), and ``MKL_ENABLE_
INSTRUCTIONS`` cannot raise it past that choice. The choice asks one exported function,
``mkl_serv_intel_cpu_true``; the two-line C file beside this module defines it as 1.
Loaded with ``RTLD_GLOBAL`` before torch, that definition is the one oneMKL's call
resolves to, so it picks its AVX-512 kernels: about x2.2 on the fp32 products of a
training step here (``benchmarks/kernels.py``). The kernels compute the same fp32
products; only the order of the additions, so the round-off, differs.

Where it applies: Linux on an AMD x86-64 CPU with AVX-512 (F, CD, BW, DQ, VL), torch not
yet imported, a C compiler to build the file once (cached under
``$XDG_CACHE_HOME/attnlab``). Anywhere else nothing is loaded and oneMKL keeps its own
choice; Intel CPUs already get AVX-512. ``ATTNLAB_MKL_AVX512=0`` turns it off.
``attnlab.__init__`` calls :func:`enable`, so every entry point (the stage commands, the
CLI, the tests) loads it before anything imports torch; :func:`fp32_matmul_path` says
afterwards which kernels oneMKL chose, and a train record keeps that in ``kernels``.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

OFF_SWITCH = "ATTNLAB_MKL_AVX512"
REQUIRED_FLAGS = frozenset({"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"})
SHIM_SOURCE = "mkl_avx512_shim.c"
# oneMKL's conditional-numerical-reproducibility branches (mkl_cbwr.h) that are AVX-512.
_AVX512_BRANCHES = {12: "AVX512", 14: "AVX512_E1"}

_outcome: str | None = None  # what enable() did in this process


def enable() -> str:
    """Load the vendor-check override where it applies; say what happened.

    Returns:
        ``"loaded"`` or why not: ``"off"`` (the off switch), ``"not applicable"`` (not
        an AMD CPU with AVX-512 on Linux), ``"too late"`` (torch was imported first),
        ``"no compiler"`` or ``"build failed: ..."``. Later calls return the first answer.
    """
    global _outcome
    if _outcome is None:
        _outcome = _enable()
    return _outcome


def _enable() -> str:
    if os.environ.get(OFF_SWITCH, "1").strip().lower() in {"0", "off", "false", "no"}:
        return "off"
    if platform.system() != "Linux" or not _amd_with_avx512(cpuinfo()):
        return "not applicable"
    if "torch" in sys.modules:
        return "too late"  # oneMKL is loaded and has bound its own definition
    try:
        library = _built_shim()
    except FileNotFoundError:
        return "no compiler"
    except (OSError, subprocess.CalledProcessError) as err:
        return f"build failed: {err}"
    ctypes.CDLL(str(library), mode=ctypes.RTLD_GLOBAL)
    return "loaded"


def cpuinfo() -> str:
    """Linux's /proc/cpuinfo; empty where there is none."""
    try:
        return Path("/proc/cpuinfo").read_text()
    except OSError:
        return ""


def _amd_with_avx512(cpuinfo: str) -> bool:
    """True when the first CPU of a /proc/cpuinfo text is AMD's with every required flag."""
    first_cpu = cpuinfo.split("\n\n", 1)[0].splitlines()
    fields = {
        key.strip(): value.strip() for key, _, value in (line.partition(":") for line in first_cpu)
    }
    flags = set(fields.get("flags", "").split())
    return fields.get("vendor_id") == "AuthenticAMD" and REQUIRED_FLAGS <= flags


def _built_shim() -> Path:
    """The shared object built from the C file, compiled once per source and cached.

    Raises:
        FileNotFoundError: no C compiler on PATH (``$CC``, ``cc`` or ``gcc``).
    """
    source = resources.files("attnlab").joinpath(SHIM_SOURCE).read_bytes()
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "attnlab"
    library = cache / f"mkl_avx512_{hashlib.sha256(source).hexdigest()[:12]}.so"
    if library.exists():
        return library
    found = (shutil.which(name) for name in (os.environ.get("CC"), "cc", "gcc") if name)
    compiler = next((path for path in found if path), None)
    if compiler is None:
        raise FileNotFoundError("no C compiler")
    cache.mkdir(parents=True, exist_ok=True)
    c_file = cache / f"{library.stem}.{os.getpid()}.c"
    partial = cache / f"{library.stem}.{os.getpid()}.so"
    try:
        c_file.write_bytes(source)
        subprocess.run(
            [compiler, "-O2", "-shared", "-fPIC", "-o", str(partial), str(c_file)],
            check=True,
            capture_output=True,
            timeout=60,
        )
        partial.replace(library)  # atomic: a parallel stage never loads half a file
    finally:
        c_file.unlink(missing_ok=True)
        partial.unlink(missing_ok=True)
    return library


def fp32_matmul_path() -> str:
    """Which kernels oneMKL chose for fp32 products in this process.

    Returns:
        ``"mkl-avx512"`` or ``"mkl-default"``; ``"no-mkl"`` where torch has no oneMKL
        (ARM, macOS) or it does not export the query.
    """
    import torch

    library = Path(torch.__file__).parent / "lib" / "libtorch_cpu.so"
    if not torch.backends.mkl.is_available() or not library.exists():
        return "no-mkl"
    try:
        branch = ctypes.CDLL(str(library)).mkl_serv_cbwr_get_auto_branch
    except (OSError, AttributeError):
        return "no-mkl"
    branch.restype = ctypes.c_int
    return "mkl-avx512" if branch() in _AVX512_BRANCHES else "mkl-default"


def describe() -> str:
    """One line for a user: which fp32 kernels this process runs, and how to change it."""
    outcome = enable()
    if outcome == "loaded":
        return f"fp32 products: oneMKL's AVX-512 kernels on this AMD CPU ({OFF_SWITCH}=0 turns off)"
    if outcome in {"off", "not applicable"}:
        return f"fp32 products: oneMKL's own choice of kernels ({outcome})"
    return f"fp32 products: oneMKL's AVX2 kernels, though this CPU has AVX-512 ({outcome})"
