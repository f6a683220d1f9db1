"""Stage ``cost``: E14, what one attention layer costs as n doubles, naive vs SDPA."""

from rich.console import Console
from rich.table import Table

from attnlab import paths, result_code
from attnlab.config import load_params
from attnlab.probes.cost import (
    IMPLEMENTATIONS,
    CostCase,
    describe_environment,
    device_memory_mib,
    resolve_device,
    run_isolated,
)
from attnlab.probes.cost_figure import plot_cost
from attnlab.probes.records import write_table
from attnlab.probes.sweep import Budgets, CostResult, cost_sweep
from attnlab.stages.command import DEFAULT_PARAMS, ParamsFile, run_stage


def main(
    params: ParamsFile = DEFAULT_PARAMS,
) -> None:
    """Time one attention layer (E14) as n doubles, naive vs SDPA, forward only, float32.

    n runs from `cost.min_tokens` doubling to `cost.max_tokens`; each row runs in a fresh
    process, on the GPU when torch sees one (`cost.device: auto`), else on the CPU: the
    median time (ms) over `cost.repeats` after `cost.warmup`, the projections' time, the
    exact score-matrix MiB and the measured peak MiB. A row predicted to exceed
    `cost.time_budget_s` (seconds) or `cost.memory_budget_fraction` of the device's memory
    is not run but written as
    stopped, with the reason; out of memory is written as a row, never a crash.

    Reads: params `seed` and `cost`.

    Writes: `reports/metrics/cost.json` (exponents, largest n reached, why it stopped,
    device, versions, threads, how the peak was measured), `reports/tables/e14_cost.tsv`
    (one row per implementation and n, with the x4 ratios) and
    `reports/figures/e14_cost.png` (log-log, with the fitted slopes).
    """
    loaded = load_params(params)
    cfg = loaded.cost
    device = resolve_device(cfg.device)
    base = CostCase(
        implementation=next(iter(IMPLEMENTATIONS)),
        n_tokens=cfg.min_tokens,
        d_model=cfg.d_model,
        n_head=cfg.n_head,
        batch=cfg.batch,
        causal=cfg.causal,
        device=device,
        warmup=cfg.warmup,
        repeats=cfg.repeats,
        seed=loaded.seed,
    )
    result = cost_sweep(
        base,
        list(IMPLEMENTATIONS),
        cfg.lengths,
        Budgets(cfg.time_budget_s, cfg.memory_budget_fraction * device_memory_mib(device)),
        cfg.slope_rows,
        run_isolated,
        describe_environment(device),
    )
    paths.write_metrics(
        paths.COST_METRICS, {**result.metrics(), result_code.CODE: result_code.stamp("cost")}
    )
    write_table(paths.COST_TABLE, result.table())
    plot_cost(result, paths.figure("e14_cost.png"))
    _show(result)


def _show(result: CostResult) -> None:
    """Print the table and the fitted exponents."""
    columns = ("implementation", "n", "status", "total_ms", "projection_ms", "scores_mib")
    columns += ("peak_mib", "time_ratio")
    table = Table(title=f"E14 on {result.environment['device_name']}")
    for column in columns:
        table.add_column(
            column, justify="left" if column in ("implementation", "status") else "right"
        )
    for row in result.table():
        cells = (row[c] for c in columns)
        table.add_row(
            *("" if v is None else f"{v:.4g}" if isinstance(v, float) else str(v) for v in cells)
        )
    console = Console(width=132)  # wide enough for every column, even under dvc
    console.print(table)
    metrics = result.metrics()
    for impl in result.implementations:
        slopes = {name: f.slope for name, f in result.fits(impl).items()}
        shown = {name: "n/a" if s is None else f"{s:.2f}" for name, s in slopes.items()}
        stop = metrics[f"e14/{impl}/stop"]
        console.print(f"{impl}: time slope {shown['time']}, peak slope {shown['peak']}; {stop}")


if __name__ == "__main__":
    run_stage(main)
