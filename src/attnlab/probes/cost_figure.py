"""The figure of E14: time and peak memory of one attention layer against n, log-log."""

import math
from pathlib import Path

from matplotlib.figure import Figure

from attnlab.probes.figures import save_figure
from attnlab.probes.sweep import OK, CostResult

COLOURS = {"naive": "tab:red", "sdpa": "tab:blue"}


def _fitted(points: dict[int, float], slope: float, at: tuple[int, ...]) -> list[float]:
    """The least-squares power law through ``points`` with this slope, evaluated ``at`` n."""
    mean_log_n = sum(math.log(n) for n in points) / len(points)
    mean_log_y = sum(math.log(y) for y in points.values()) / len(points)
    return [math.exp(mean_log_y + slope * (math.log(n) - mean_log_n)) for n in at]


def plot_cost(result: CostResult, path: Path) -> None:
    """E14: time and peak memory against n, log-log, with the fitted exponents.

    The dashed lines are the fits, over the rows they were fitted on; where a sweep
    stopped or ran out of memory, the title says at which n and why.
    """
    fig = Figure(figsize=(11, 4.8), layout="constrained")
    panels = {"time": fig.add_subplot(1, 2, 1), "peak": fig.add_subplot(1, 2, 2)}
    units = {"time": "median forward time (ms)", "peak": "peak memory above inputs (MiB)"}
    notes, plotted = [], set()
    for impl in result.implementations:
        measured = [(r.case.n_tokens, r.measured) for r in result.rows_of(impl) if r.measured]
        values = {
            "time": {n: m.total_ms for n, m in measured},
            "peak": {n: m.peak_mib for n, m in measured},
        }
        for name, f in result.fits(impl).items():
            ax, colour = panels[name], COLOURS.get(impl)
            # A log axis has no room for 0 (an RSS peak below one page of growth).
            shown = {n: y for n, y in values[name].items() if y > 0}
            label = impl if f.slope is None else f"{impl}: slope {f.slope:.2f}"
            ax.plot(list(shown), list(shown.values()), "o-", color=colour, label=label)
            plotted |= {name} if shown else set()
            if f.slope is not None and f.first_n is not None and f.last_n is not None:
                window = {n: y for n, y in shown.items() if f.first_n <= n <= f.last_n}
                ends = (f.first_n, f.last_n)
                ax.plot(ends, _fitted(window, f.slope, ends), "k--", lw=1)
        last = result.rows_of(impl)[-1]
        if last.status != OK:
            notes.append(f"{impl}: {last.status} at n={last.case.n_tokens} ({last.note[:90]})")
    for name, ax in panels.items():
        # Log-log where there is data; an empty log axis cannot even be drawn.
        ax.set(yscale="log" if name in plotted else "linear", xlabel="n (tokens)")
        ax.set_ylabel(units[name])
        ax.set_xscale("log", base=2)
        ax.legend(title="dashed: fitted over the last rows")
        ax.grid(True, which="major", alpha=0.3)
    env = result.environment
    title = (
        f"E14: one attention layer, forward only, {env['dtype']} on {env['device']} "
        f"({env['device_name']}, {env['threads']} threads, "
        f"load average {env.get('load_average_at_start', 'not recorded')} at the start)"
    )
    fig.suptitle("\n".join([title, *notes]), fontsize=10)
    save_figure(fig, path)
