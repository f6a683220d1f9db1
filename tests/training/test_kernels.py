"""trainer.compile: torch.compile's kernels train the eager run to fp32 round-off."""

import pytest
import torch
import torch._inductor.config as inductor
from train_helpers import shrunk_params

from attnlab.config import parse_params
from attnlab.errors import ParamsError
from attnlab.mkl_avx512 import fp32_matmul_path
from attnlab.training import kernels
from attnlab.training.kernels import should_compile


def _trainer(**settings):
    return parse_params(shrunk_params(trainer=settings)).trainer


def test_a_compiled_run_trains_the_eager_runs_curve_to_round_off(train_in_process):
    # Dropout on: the compiled step must draw the eager run's masks, not Inductor's own.
    runs = {
        setting: train_in_process(
            shrunk_params(steps=8, model={"dropout": 0.1}, trainer={"compile": setting}),
            "ladder-layernorm",
        )
        for setting in (False, True)
    }
    eager, compiled = runs[False], runs[True]
    steps = (eager.metrics["kernels"]["step"], compiled.metrics["kernels"]["step"])
    assert steps == ("eager", "compiled")
    assert eager.metrics["kernels"]["fp32_matmul"] == fp32_matmul_path()
    assert [s for s, _ in compiled.curve] == [s for s, _ in eager.curve]
    for (_, a), (_, b) in zip(compiled.curve, eager.curve, strict=True):
        assert a == pytest.approx(b, rel=1e-6)
    for name, weight in eager.model.state_dict().items():
        torch.testing.assert_close(compiled.model.state_dict()[name], weight, rtol=1e-4, atol=1e-6)


def test_auto_compiles_only_a_run_long_enough_to_repay_the_compile():
    auto = _trainer(compile="auto", compile_min_steps=300)
    assert not should_compile(auto, 299, "cpu")
    assert should_compile(auto, 300, "cpu") == kernels.compiles_here("cpu")
    assert not should_compile(_trainer(compile=False, compile_min_steps=0), 10_000, "cpu")


def test_compile_true_where_nothing_compiles_is_refused_naming_the_key(monkeypatch):
    kernels._probe.cache_clear()
    # No C++ compiler to be found and no cached kernel to fall back on: compiling fails.
    monkeypatch.setattr(inductor.cpp, "cxx", ("attnlab-no-such-compiler",))
    monkeypatch.setattr(inductor, "fx_graph_cache", False)
    torch._dynamo.reset()
    try:
        with pytest.raises(ParamsError, match="trainer.compile: true"):
            should_compile(_trainer(compile=True, compile_min_steps=0), 1, "cpu")
        assert not should_compile(_trainer(compile="auto", compile_min_steps=0), 1, "cpu")
    finally:
        kernels._probe.cache_clear()
        torch._dynamo.reset()
