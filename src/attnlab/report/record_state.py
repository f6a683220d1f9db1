"""The record's state, which the page and REPORT.md open with: which code, what is current.

A report is decided from current runs only (:mod:`attnlab.report.stale`): a run made under
other params or by other code is left out, and every claim that reads it is *stale*. So
that no reader takes a stale page for a finished one, the report first says which code it
judged against (one digest of every recording stage's code), how many of the runs the
params expect are current, why the rest are not (grouped by reason, not one line per run),
and the command that brings it up to date.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from attnlab.report.inputs import Results
from attnlab.report.stale import run_of
from attnlab.verdicts.decisions import STALE, Verdict

CONTINUE = "attnlab repro --time-limit 2h"  # advances the record by what fits; rerun it
AT_ONCE = "attnlab repro --yes"  # every stale stage now


@dataclass(frozen=True)
class RecordState:
    """What the report says of its record before any claim.

    Attributes:
        code: A short digest of the code every record was judged against.
        current: The runs the params expect that were read as current.
        expected: The runs the params expect (each variant's seeds, Winograd's too).
        stale_claims: The claims whose verdict is *stale*.
        reasons: Why records were left out: (reason, how many records), most first.
        continue_command: The command that advances the record.
        at_once_command: The command that runs every stale stage now.
    """

    code: str
    current: int
    expected: int
    stale_claims: int
    reasons: list[tuple[str, int]]
    continue_command: str = CONTINUE
    at_once_command: str = AT_ONCE

    @property
    def is_current(self) -> bool:
        """Every expected run is current, no record was left out and no claim is stale."""
        return self.current == self.expected and not self.reasons and not self.stale_claims


def code_digest(code: Mapping[str, Mapping[str, str]] | None) -> str:
    """One short digest of every recording stage's code digests (empty when not judged)."""
    if code is None:
        return ""
    canonical = json.dumps(code, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:12]


def record_state(
    results: Results, verdicts: Sequence[Verdict], code: Mapping[str, Mapping[str, str]] | None
) -> RecordState:
    """The record's state from what was read, what was left out, and the verdicts."""
    read: dict[str, set] = {}
    for source, runs in results.metrics.items():
        read.setdefault(run_of(source), set()).update(runs)
    expected = sum(len(seeds) for seeds in results.expected.values())
    current = sum(len(set(seeds) & read.get(run, set())) for run, seeds in results.expected.items())
    reasons = Counter(_reason(line) for line in results.stale)
    return RecordState(
        code=code_digest(code),
        current=current,
        expected=expected,
        stale_claims=sum(v.status == STALE for v in verdicts),
        reasons=sorted(reasons.items(), key=lambda item: (-item[1], item[0])),
    )


def _reason(line: str) -> str:
    """A stale line's reason without the record it names (``ladder-mlp seed 1: ...``)."""
    reason = line.split(": ", 1)[1] if ": " in line else line
    return reason.removeprefix("train.json ").removeprefix("eval.json ")
