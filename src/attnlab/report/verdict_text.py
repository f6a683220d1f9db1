"""A verdict in the report's words: what it rests on, and what would decide it.

Shared by the page, the Markdown, the robustness tables and the sweep section, so that a
verdict reads the same wherever it is shown.
"""

from __future__ import annotations

from attnlab.verdicts.decisions import NOT_RUN, STALE, Verdict


def basis(verdict: Verdict) -> str:
    """What a verdict rests on: ``n = 3, 95 % CI [0.95, 0.99]``, ``exact``, or nothing."""
    if verdict.status in (NOT_RUN, STALE):
        return ""
    if verdict.n is None:
        return "exact"
    if verdict.interval.startswith("["):  # a t-interval; otherwise a p-value says itself
        return f"n = {verdict.n}, 95 % CI {verdict.interval}"
    if verdict.interval and verdict.interval != "n = 1":
        return f"n = {verdict.n}, {verdict.interval}"
    return f"n = {verdict.n}"


def status_cell(verdict: Verdict) -> str:
    """A verdict as one table cell: its status, then what it rests on in brackets."""
    shown = basis(verdict)
    return f"{verdict.status} ({shown})" if shown else verdict.status


def deciding_runs(verdict: Verdict) -> str:
    """For an inconclusive claim, the runs that would decide it: more seeds of which variants."""
    variants = ", ".join(verdict.variants) or "its inputs"
    if verdict.n == 1:
        return f"n = 1: at least one more seed of {variants} (an interval needs two)"
    needed = (
        f"about {verdict.seeds_needed} in all at this spread"
        if verdict.seeds_needed
        else "no estimate of how many from this spread"
    )
    return f"n = {verdict.n}, interval {verdict.interval}: more seeds of {variants} ({needed})"
