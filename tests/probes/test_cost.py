"""E14: the cost sweep's rows, fits, budgets and out-of-memory rows."""

import dataclasses
import math

import pytest
import torch

from attnlab.probes.cost import (
    CostCase,
    Measurement,
    device_memory_mib,
    measure_case,
    run_isolated,
)
from attnlab.probes.cost_figure import plot_cost
from attnlab.probes.sweep import (
    OK,
    OUT_OF_MEMORY,
    STOPPED,
    Budgets,
    cost_sweep,
    loglog_slope,
)

BASE = CostCase(
    implementation="naive",
    n_tokens=128,
    d_model=64,
    n_head=4,
    batch=1,
    causal=True,
    device="cpu",
    warmup=1,
    repeats=2,
    seed=0,
)
ENV = {"device": "cpu", "device_name": "test", "threads": 1, "dtype": "float32"}
ROOMY = Budgets(time_s=600, memory_mib=1e6)


def test_a_tiny_sweep_gives_well_formed_rows_and_a_slope():
    result = cost_sweep(BASE, ["naive", "sdpa"], [128, 256, 512, 1024], ROOMY, 4, measure_case, ENV)
    table = result.table()
    assert [(r["implementation"], r["n"]) for r in table] == [
        (impl, n) for impl in ("naive", "sdpa") for n in (128, 256, 512, 1024)
    ]
    for row in table:
        assert row["status"] == OK
        assert row["total_ms"] > 0 and row["projection_ms"] > 0
        assert row["scores_mib"] == 4 * row["n"] ** 2 * 4 / 2**20  # B * H * n^2 * 4 bytes
    assert [r["time_ratio"] is None for r in table[:2]] == [True, False]
    metrics = result.metrics()
    for impl in ("naive", "sdpa"):
        assert math.isfinite(metrics[f"e14/{impl}/time_slope"])
        assert metrics[f"e14/{impl}/max_n_reached"] == 1024
        assert metrics[f"e14/{impl}/stop"] == "reached max_tokens"
    assert metrics["e14/budget/memory_mib"] == ROOMY.memory_mib


def _fake(row_s: float, peak_mib: float, oom_from: int | None = None):
    """A row runner whose cost grows x4 per doubling from n = 128, failing from ``oom_from``."""

    def run(case: CostCase) -> Measurement:
        if oom_from is not None and case.n_tokens >= oom_from:
            raise torch.OutOfMemoryError(f"CUDA out of memory at n={case.n_tokens}")
        growth = (case.n_tokens / 128) ** 2
        return Measurement(1.0 * growth, 0.1, peak_mib * growth, row_s * growth, 1)

    return run


def test_an_injected_out_of_memory_becomes_a_row_and_ends_the_sweep():
    run = _fake(row_s=0.01, peak_mib=1.0, oom_from=512)
    result = cost_sweep(BASE, ["naive"], [128, 256, 512, 1024], ROOMY, 4, run, ENV)
    assert [(r["n"], r["status"]) for r in result.table()] == [
        (128, OK),
        (256, OK),
        (512, OUT_OF_MEMORY),
    ]
    assert "n=512" in result.table()[-1]["note"]
    assert result.metrics()["e14/naive/max_n_reached"] == 256
    assert result.metrics()["e14/naive/stop"].startswith("out of memory at n=512")


def test_the_cpu_allocators_real_out_of_memory_becomes_a_row():
    # d_model 1, one head: the input is 32 MiB, but the n x n scores would be 256 TiB,
    # beyond any process's address space, so the allocator refuses at once.
    case = dataclasses.replace(BASE, d_model=1, n_head=1, warmup=0, repeats=1)
    result = cost_sweep(case, ["naive"], [2**23], ROOMY, 4, measure_case, ENV)
    assert result.table()[0]["status"] == OUT_OF_MEMORY
    assert "can't allocate memory" in result.table()[0]["note"]


def test_an_unrelated_error_is_not_hidden_as_a_row():
    def broken(case: CostCase) -> Measurement:
        raise ValueError("a bug")

    with pytest.raises(ValueError, match="a bug"):
        cost_sweep(BASE, ["naive"], [128], ROOMY, 4, broken, ENV)


@pytest.mark.parametrize(
    ("budgets", "reason"),
    [(Budgets(time_s=30, memory_mib=1e6), "time budget"), (Budgets(600, 100), "memory budget")],
)
def test_a_row_predicted_over_budget_is_not_run_and_says_why(budgets, reason):
    ran = []

    def run(case: CostCase) -> Measurement:
        ran.append(case.n_tokens)
        return _fake(row_s=2.0, peak_mib=6.0)(case)

    # Rows: 128 -> 2 s, 6 MiB; 256 -> 8 s, 24 MiB; 512 predicted 32 s and 96 MiB,
    # then 1024 predicted 128 s and 384 MiB.
    result = cost_sweep(BASE, ["naive"], [128, 256, 512, 1024], budgets, 4, run, ENV)
    last = result.table()[-1]
    assert last["status"] == STOPPED and reason in last["note"]
    assert ran == [128, 256, 512][: len(result.table()) - 1]
    assert last["n"] not in ran


def test_the_fitted_exponent_of_a_power_law_is_its_power():
    ns = [256, 512, 1024, 2048]
    assert loglog_slope(ns, [3 * n**2 for n in ns]) == pytest.approx(2.0)
    result = cost_sweep(BASE, ["naive"], [128, 256, 512, 1024], ROOMY, 3, _fake(0.01, 1.0), ENV)
    fits = result.fits("naive")
    assert fits["time"].slope == pytest.approx(2.0) and fits["peak"].slope == pytest.approx(2.0)
    assert (fits["time"].first_n, fits["time"].last_n) == (256, 1024)  # the last three rows


def test_the_memory_budget_is_a_fraction_of_real_memory():
    assert 256 < device_memory_mib("cpu") < 2**24  # between 256 MiB and 16 TiB of RAM


def test_an_isolated_row_measures_its_own_peak():
    # Naive attention holds the scores and the weights at once: at least two n x n matrices.
    case = dataclasses.replace(BASE, d_model=64, n_head=8, n_tokens=1024, repeats=1)
    measured = run_isolated(case)
    assert measured.peak_mib >= 1.5 * case.scores_mib
    assert measured.total_ms > 0 and measured.threads >= 1


def test_the_figure_draws_fits_and_says_where_a_sweep_stopped(tmp_path):
    run = _fake(row_s=0.01, peak_mib=0.0, oom_from=1024)  # zero peaks: nothing to log-plot
    result = cost_sweep(BASE, ["naive", "sdpa"], [128, 256, 512, 1024], ROOMY, 4, run, ENV)
    path = tmp_path / "cost.png"
    plot_cost(result, path)
    assert path.read_bytes().startswith(b"\x89PNG")
