"""The figure of E14: time and peak memory of one attention layer against n, log-log."""

from pathlib import Path

from matplotlib.figure import Figure

from attnlab.probes.figures import save_figure
from attnlab.probes.sweep import OK, CostResult

COLOURS = {"naive": "tab:red", "sdpa": "tab:blue"}


def plot_cost(result: CostResult, path: Path) -> None:
    """E14: time and peak memory against n, log-log, with the fitted exponents."""
    fig = Figure(figsize=(11, 4.5), layout="constrained")
    panels = {"time": fig.add_subplot(1, 2, 1), "peak": fig.add_subplot(1, 2, 2)}
    units = {"time": "median forward time (ms)", "peak": "peak memory above inputs (MiB)"}
    notes = []
    for impl in result.implementations:
        rows = [r for r in result.rows_of(impl) if r.measured is not None]
        ns = [r.case.n_tokens for r in rows]
        values = {
            "time": [r.measured.total_ms for r in rows if r.measured],
            "peak": [r.measured.peak_mib for r in rows if r.measured],
        }
        for name, f in result.fits(impl).items():
            ax, colour = panels[name], COLOURS.get(impl)
            label = impl if f.slope is None else f"{impl}: slope {f.slope:.2f}"
            ax.plot(ns, values[name], "o-", color=colour, label=label)
            if f.slope is not None and f.first_n is not None and f.last_n is not None:
                y_last = values[name][ns.index(f.last_n)]
                fitted = [y_last * (n / f.last_n) ** f.slope for n in (f.first_n, f.last_n)]
                ax.plot((f.first_n, f.last_n), fitted, "--", color="black", lw=1)
        last = result.rows_of(impl)[-1]
        if last.status != OK:
            notes.append(f"{impl} at n={last.case.n_tokens}: {last.status} ({last.note})")
    for name, ax in panels.items():
        ax.set(xscale="log", yscale="log", xlabel="n (tokens)", ylabel=units[name])
        ax.set_xscale("log", base=2)
        ax.legend(title="fitted over the last rows (dashed)")
        ax.grid(True, which="major", alpha=0.3)
    env = result.environment
    fig.suptitle(
        f"E14: one attention layer, forward only, {env['dtype']} on {env['device']} "
        f"({env['device_name']}, {env['threads']} threads)"
    )
    if notes:
        fig.text(0.01, 0.0, "\n".join(notes)[:400], fontsize=7, va="bottom")
    save_figure(fig, path)
