"""E14, the sweep: n doubles until the cost law is clear, a budget says stop, or memory runs out.

For each implementation, n runs from the first length doubling to the last. Before each row
the previous row predicts this one: the score matrix is n^2, so a doubling is expected to
cost x4 in time and in memory. A row predicted to break the time or the memory
budget is not run; it is written as a ``stopped`` row saying why. A row that
runs out of memory is written as an ``out of memory`` row. Either ends that
implementation's sweep; neither is a crash. The fitted exponent is the least-squares slope
of log(cost) against log(n) over the last ``slope_rows`` measured rows.
"""

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

from attnlab.probes.cost import CostCase, Measurement, is_out_of_memory
from attnlab.probes.records import Value

EXPECTED_GROWTH = 4.0  # per doubling of n: the n x n score matrix
OK, OUT_OF_MEMORY, STOPPED = "ok", "out of memory", "stopped"


@dataclass(frozen=True)
class CostRow:
    """One row of the E14 table; ``measured`` is None for a row that did not complete."""

    case: CostCase
    status: str
    measured: Measurement | None
    note: str


@dataclass(frozen=True)
class Budgets:
    """When to stop doubling: a row predicted to exceed either budget is not run."""

    time_s: float
    memory_mib: float


def over_budget(previous: Measurement, budgets: Budgets) -> str | None:
    """Why the next row (twice as long as ``previous``) should not run, or None if it may."""
    reasons = []
    row_s = previous.row_s * EXPECTED_GROWTH
    if row_s > budgets.time_s:
        reasons.append(f"time budget: predicted {row_s:.0f} s > {budgets.time_s:g} s")
    peak = previous.peak_mib * EXPECTED_GROWTH
    if peak > budgets.memory_mib:
        reasons.append(
            f"memory budget: predicted peak {peak:.0f} MiB > {budgets.memory_mib:.0f} MiB"
        )
    return "; ".join(reasons) or None


def sweep_implementation(
    base: CostCase,
    lengths: list[int],
    budgets: Budgets,
    run_case: Callable[[CostCase], Measurement],
) -> list[CostRow]:
    """Run one implementation up the lengths; the last row says why it stopped, if it did.

    Args:
        base: The case to vary (its ``n_tokens`` is replaced by each length).
        lengths: n, doubling.
        budgets: The per-row time and memory budgets.
        run_case: Measures one row (:func:`run_isolated` or :func:`measure_case`); its
            out-of-memory errors become rows, every other error propagates.
    """
    rows: list[CostRow] = []
    previous: Measurement | None = None
    for n in lengths:
        case = dataclasses.replace(base, n_tokens=n)
        reason = over_budget(previous, budgets) if previous is not None else None
        if reason is not None:
            rows.append(CostRow(case, STOPPED, None, reason))
            break
        try:
            previous = run_case(case)
        except Exception as error:
            if not is_out_of_memory(error):
                raise
            rows.append(CostRow(case, OUT_OF_MEMORY, None, str(error).splitlines()[0][:200]))
            break
        rows.append(CostRow(case, OK, previous, ""))
    return rows


def loglog_slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of log(y) on log(x): the exponent of a power law."""
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True)) / sum(
        (a - mx) ** 2 for a in lx
    )


@dataclass(frozen=True)
class Fit:
    """A fitted exponent and the lengths it was fitted over (None with fewer than 2 rows)."""

    slope: float | None
    first_n: int | None
    last_n: int | None


def fit(rows: list[CostRow], value: Callable[[Measurement], float], last: int) -> Fit:
    """Fit log(value) on log(n) over the last ``last`` measured rows with a positive value."""
    points = [
        (r.case.n_tokens, value(r.measured))
        for r in rows
        if r.measured is not None and value(r.measured) > 0
    ][-last:]
    if len(points) < 2:
        return Fit(None, None, None)
    ns, ys = zip(*points, strict=True)
    return Fit(loglog_slope(list(ns), list(ys)), ns[0], ns[-1])


@dataclass(frozen=True)
class CostResult:
    """The whole E14 table, the fits per implementation, and what it was measured on."""

    rows: list[CostRow]
    slope_rows: int
    budgets: Budgets
    environment: dict[str, str | int | float]

    @property
    def implementations(self) -> list[str]:
        """The implementations, in table order."""
        return list(dict.fromkeys(r.case.implementation for r in self.rows))

    def rows_of(self, implementation: str) -> list[CostRow]:
        """The rows of one implementation, shortest n first."""
        return [r for r in self.rows if r.case.implementation == implementation]

    def fits(self, implementation: str) -> dict[str, Fit]:
        """The time and peak-memory exponents of one implementation."""
        rows = self.rows_of(implementation)
        return {
            "time": fit(rows, lambda m: m.total_ms, self.slope_rows),
            "peak": fit(rows, lambda m: m.peak_mib, self.slope_rows),
        }

    def metrics(self) -> dict[str, Value]:
        """Environment, then per implementation: exponents, reach, and each row's numbers."""
        out: dict[str, Value] = {f"e14/{k}": v for k, v in self.environment.items()}
        out["e14/budget/time_s"] = self.budgets.time_s
        out["e14/budget/memory_mib"] = round(self.budgets.memory_mib)
        for impl in self.implementations:
            rows = self.rows_of(impl)
            done = [(r.case.n_tokens, r.measured) for r in rows if r.measured is not None]
            fits = self.fits(impl)
            for name, f in fits.items():
                out[f"e14/{impl}/{name}_slope"] = f.slope
            out[f"e14/{impl}/slope_from_n"] = fits["time"].first_n
            out[f"e14/{impl}/max_n_reached"] = done[-1][0] if done else None
            last = rows[-1]
            out[f"e14/{impl}/stop"] = (
                "reached max_tokens"
                if last.status == OK
                else f"{last.status} at n={last.case.n_tokens}: {last.note}"
            )
            for n, m in done:
                out[f"e14/{impl}/total_ms@{n}"] = m.total_ms
                out[f"e14/{impl}/peak_mib@{n}"] = m.peak_mib
        return out

    def table(self) -> list[dict[str, Value]]:
        """One row per (implementation, n) tried, with the x4 ratios to the row before."""
        table: list[dict[str, Value]] = []
        for impl in self.implementations:
            before: Measurement | None = None
            for r in self.rows_of(impl):
                m = r.measured
                table.append(
                    {
                        "implementation": impl,
                        "n": r.case.n_tokens,
                        "status": r.status,
                        "total_ms": m.total_ms if m else None,
                        "projection_ms": m.projection_ms if m else None,
                        "scores_mib": r.case.scores_mib,
                        "peak_mib": m.peak_mib if m else None,
                        "time_ratio": m.total_ms / before.total_ms if m and before else None,
                        "peak_ratio": _ratio(m.peak_mib, before.peak_mib) if m and before else None,
                        "row_s": m.row_s if m else None,
                        "threads": m.threads if m else None,
                        "note": r.note,
                    }
                )
                before = m
        return table


def _ratio(a: float, b: float) -> float | None:
    return a / b if b > 0 else None


def cost_sweep(
    base: CostCase,
    implementations: list[str],
    lengths: list[int],
    budgets: Budgets,
    slope_rows: int,
    run_case: Callable[[CostCase], Measurement],
    environment: dict[str, str | int | float],
) -> CostResult:
    """Run E14: every implementation up the lengths, then fit the exponents."""
    rows: list[CostRow] = []
    for impl in implementations:
        start = dataclasses.replace(base, implementation=impl)
        rows += sweep_implementation(start, lengths, budgets, run_case)
    return CostResult(rows, slope_rows, budgets, environment)
