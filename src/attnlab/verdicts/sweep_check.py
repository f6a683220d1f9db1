"""The verdict of a study's best-trial check: "the sweep's best beats the catalogue's choice".

The ``sweep-check@<study>-<seed>`` stage trains the study's best trial as a normal run under
every seed, at its variant's full length (``sweep-check/<study>/eval``); the variant's own
runs are the catalogue's choice (``<variant>/eval``). The claim is decided like every
trained "beats" of the catalogue (its E02.6-E02.9, :data:`BEATS`): paired by
seed on the 95 % t-interval of the mean log-ratio of their whole-split val/ppl, *holds*
when the whole interval is below 1, *does not hold* when it is wholly at or above 1 (the
same configuration trained twice gives exactly 1 where training is deterministic, as on
the CPU), *inconclusive* otherwise, and *not run* while either side is missing.
"""

from __future__ import annotations

from attnlab.verdicts.claims import Claim, Verdict, judge
from attnlab.verdicts.rules import Measurements, Ref, ratio_in

# The rule's definition: "beats" is the whole paired interval below 1, the threshold of
# every trained "beats" of the catalogue (E02.6-E02.9; a test checks they agree).
BEATS = 1.0
CLAIM = "the sweep's best beats the catalogue's choice"
READING = (
    "'beats': lower val/ppl than the catalogue's choice, the whole paired interval below 1, "
    "as every trained 'beats' of the catalogue"
)


def check_source(study: str) -> str:
    """The metrics source of study ``study``'s best-trial check (per seed)."""
    return f"sweep-check/{study}/eval"


def best_beats_choice(study: str, variant: str) -> Claim:
    """The claim for ``study``: its best trial's runs against ``variant``'s, paired by seed."""
    best = Ref(check_source(study), "val/ppl", "ppl(sweep's best)")
    choice = Ref(f"{variant}/eval", "val/ppl", f"ppl({variant})")
    return Claim(
        f"{study}.check",
        "sweeps",
        CLAIM,
        ratio_in(best, choice, hi=BEATS, strict=True),
        READING,
    )


def check_verdict(results: Measurements, study: str, variant: str) -> Verdict:
    """The claim's verdict from the measured runs (*not run* while either side is missing)."""
    return judge(best_beats_choice(study, variant), results)
