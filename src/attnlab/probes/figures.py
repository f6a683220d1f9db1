"""The figures of E06 (effective tokens against d) and E07 (frozen fraction against d).

Drawn with matplotlib's object-oriented API on an Agg canvas (no pyplot, no display, no
global state), saved as PNG by :func:`save_figure`, which the E14 figure shares.
"""

from pathlib import Path

from matplotlib.figure import Figure

from attnlab.probes.scores import SoftmaxRows

COLOURS = {"divided": "tab:blue", "undivided": "tab:red"}


def save_figure(fig: Figure, path: Path) -> None:
    """Save ``fig`` as a PNG at ``path``, without the matplotlib version in its metadata."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120, metadata={"Software": None})


def plot_effective_tokens(draw: SoftmaxRows, path: Path) -> None:
    """E06: mean (solid) and median (dotted) exp(entropy) of a row against d."""
    fig = Figure(figsize=(6, 4), layout="constrained")
    ax = fig.add_subplot()
    for divided, label in ((True, "divided"), (False, "undivided")):
        stats = [s for s in draw.stats if s.divided == divided]
        dims = [s.d for s in stats]
        colour = COLOURS[label]
        ax.plot(
            dims,
            [s.mean_effective_tokens for s in stats],
            "o-",
            color=colour,
            label=f"{label}, mean",
        )
        ax.plot(dims, [s.median_effective_tokens for s in stats], ":", color=colour)
    ax.plot([], [], ":", color="grey", label="median (dotted)")
    for level, text in ((draw.row_length, f"all {draw.row_length} keys"), (1, "one key")):
        ax.axhline(level, color="grey", lw=0.8, ls="--")
        ax.text(draw.stats[0].d, level * 1.05, text, color="grey", fontsize=8, va="bottom")
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="d (width of q and k)",
        ylabel="effective tokens, exp(entropy)",
        title=f"E06: how many of {draw.row_length} keys a query attends to",
    )
    ax.set_xticks([s.d for s in draw.stats], [str(s.d) for s in draw.stats])
    ax.legend(title="scores / sqrt(d)")
    save_figure(fig, path)


def plot_frozen_fraction(draw: SoftmaxRows, path: Path) -> None:
    """E07: the fraction of rows whose largest weight exceeds the threshold, against d."""
    fig = Figure(figsize=(6, 4), layout="constrained")
    ax = fig.add_subplot()
    for divided, label in ((True, "divided"), (False, "undivided")):
        stats = [s for s in draw.stats if s.divided == divided]
        ax.plot(
            [s.d for s in stats],
            [s.frozen_fraction for s in stats],
            "o-",
            color=COLOURS[label],
            label=label,
        )
    ax.set(
        xscale="log",
        ylim=(-0.02, 1.02),
        xlabel="d (width of q and k)",
        ylabel=f"fraction of rows with max weight > {draw.frozen_above:g}",
        title=f"E07: frozen rows among {draw.rows} rows of {draw.row_length} scores",
    )
    ax.set_xticks([s.d for s in draw.stats], [str(s.d) for s in draw.stats])
    ax.legend(title="scores / sqrt(d)")
    save_figure(fig, path)
