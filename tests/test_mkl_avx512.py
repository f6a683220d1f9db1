"""oneMKL's AVX-512 kernels on AMD CPUs: loaded where they apply, off on request, same numbers.

Each case is a fresh Python process, since oneMKL chooses its kernels once, when torch
loads it. The products are checked against float64 on both paths: the AVX-512 kernels
add in another order, so they may differ from the default in the last bits, never more.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from attnlab import mkl_avx512

AVX512 = "fpu sse2 avx2 fma avx512f avx512dq avx512cd avx512bw avx512vl"
ZEN4 = f"vendor_id\t: AuthenticAMD\nflags\t\t: {AVX512}\n\nprocessor\t: 1\n"
ZEN3 = "vendor_id\t: AuthenticAMD\nflags\t\t: fpu sse2 avx2 fma\n"
INTEL = f"vendor_id\t: GenuineIntel\nflags\t\t: {AVX512}\n"
APPLIES_HERE = mkl_avx512._amd_with_avx512(mkl_avx512.cpuinfo())

# What a process reports: how enable() ended, oneMKL's choice, and a product's worst
# relative error against float64.
PROBE = """
import json, sys
{first}
import torch
from attnlab import mkl_avx512
torch.manual_seed(0)
a, b = torch.randn(384, 512), torch.randn(512, 256)
exact = a.double() @ b.double()
error = ((a @ b).double() - exact).abs().max() / exact.abs().max()
print(json.dumps({{
    "outcome": mkl_avx512.enable(),
    "path": mkl_avx512.fp32_matmul_path(),
    "error": error.item(),
    "product": (a @ b).sum().item(),
    "line": mkl_avx512.describe(),
}}))
"""


def _probe(tmp_path: Path, torch_first: bool = False, script: str = PROBE, **env: str) -> dict:
    """Run ``script`` in a fresh process (its build cached under ``tmp_path``); its JSON."""
    first = "import torch\nimport attnlab" if torch_first else "import attnlab"
    environ = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), **env}
    done = subprocess.run(
        [sys.executable, "-c", script.format(first=first)],
        env=environ,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize(
    ("cpuinfo", "applies"), [(ZEN4, True), (ZEN3, False), (INTEL, False), ("", False)]
)
def test_it_applies_only_to_an_amd_cpu_with_avx512(cpuinfo, applies):
    assert mkl_avx512._amd_with_avx512(cpuinfo) is applies


@pytest.mark.skipif(not APPLIES_HERE, reason="needs an AMD CPU with AVX-512 (this machine kind)")
def test_the_avx512_kernels_run_by_default_and_the_off_switch_restores_mkls_choice(tmp_path):
    fast = _probe(tmp_path)
    default = _probe(tmp_path, ATTNLAB_MKL_AVX512="0")
    assert (fast["outcome"], fast["path"]) == ("loaded", "mkl-avx512")
    assert (default["outcome"], default["path"]) == ("off", "mkl-default")
    # Both within fp32 round-off of the exact product (k = 512 terms, unit round-off 6e-8).
    assert fast["error"] < 1e-6 and default["error"] < 1e-6
    assert fast["product"] == pytest.approx(default["product"], rel=1e-5)
    assert list((tmp_path / "cache" / "attnlab").glob("mkl_avx512_*.so"))  # built once, kept


@pytest.mark.skipif(not APPLIES_HERE, reason="needs an AMD CPU with AVX-512 (this machine kind)")
def test_torch_imported_first_keeps_mkls_choice_and_says_why(tmp_path):
    late = _probe(tmp_path, torch_first=True)
    assert (late["outcome"], late["path"]) == ("too late", "mkl-default")


@pytest.mark.skipif(not APPLIES_HERE, reason="needs an AMD CPU with AVX-512 (this machine kind)")
def test_without_a_c_compiler_it_falls_back_and_says_so(tmp_path):
    # Only the interpreter's own folder on PATH: no cc, no gcc, and no cached build.
    bare = _probe(tmp_path, PATH=str(Path(sys.executable).parent), CC="")
    assert (bare["outcome"], bare["path"]) == ("no compiler", "mkl-default")
    assert bare["line"] == (
        "fp32 products: oneMKL's AVX2 kernels, though this CPU has AVX-512 (no compiler)"
    )


TRAIN = """
import json
{first}
import torch
from attnlab.models import LanguageModel, ModelConfig
from attnlab.mkl_avx512 import fp32_matmul_path
from attnlab.training import next_token_loss
torch.manual_seed(0)
model = LanguageModel(ModelConfig())
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
# A learnable text: each token follows from the one before (x -> 5x + 1 mod 1024).
columns = [torch.randint(0, 1024, (50, 16), generator=torch.Generator().manual_seed(1))]
for _ in range(128):
    columns.append((columns[-1] * 5 + 1) % 1024)
batches = torch.stack(columns, dim=-1)
losses = []
for batch in batches:
    loss = next_token_loss(model, batch[:, :-1], batch[:, 1:])
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    losses.append(loss.item())
print(json.dumps({{"path": fp32_matmul_path(), "losses": losses}}))
"""


@pytest.mark.skipif(not APPLIES_HERE, reason="needs an AMD CPU with AVX-512 (this machine kind)")
def test_fifty_training_steps_on_either_path_agree_to_round_off(tmp_path):
    runs = {switch: _probe(tmp_path, script=TRAIN, ATTNLAB_MKL_AVX512=switch) for switch in "10"}
    assert (runs["1"]["path"], runs["0"]["path"]) == ("mkl-avx512", "mkl-default")
    fast, default = runs["1"]["losses"], runs["0"]["losses"]
    assert fast[-1] < fast[0] - 0.5  # it trained: the comparison is not of a flat line
    # AdamW's normalised steps keep round-off from growing fast: 50 steps stay within 1e-5.
    assert fast == pytest.approx(default, rel=1e-5)
