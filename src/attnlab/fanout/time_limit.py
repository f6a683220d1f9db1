"""A fan-out in a slice of compute: start only what fits before the limit, stop at it.

Serves ``attnlab repro --time-limit`` (and ``benchmarks/gpu_story.py --time-limit``): the
record advances on whatever compute comes, a few hours on two cores or minutes of a lent
GPU, and what a slice finished is kept (its ``dvc.lock`` entries and metrics, a sweep's
journal: all in git), so that the same command on the same or a new machine continues.

A stage starts only when its *unit* fits in what is left of the limit, by the predicted
costs (:mod:`~attnlab.fanout.forecast`):

- a training with the planned stages of the same variant and seed that read it (its
  evaluation, its Winograd scoring) is one unit: a model is never trained in one slice and
  evaluated in another, where it would have to be trained again (models are not in git);
- a sweep advances trial by trial: it starts when one trial fits, and the limit stops it
  at its running trial's next step; its journal keeps the finished trials;
- any other stage is a unit of its own.

At the limit the running stages are stopped as Ctrl-C stops them
(:class:`~attnlab.fanout.launcher.FanOut`): checkpoints kept, outputs restored. Only the
stages *owed* to a finished training (its evaluation) still run, past the limit by their
few predicted seconds: the model stays on this machine, and a continuation elsewhere
would find it recorded and absent.
"""

import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from attnlab.errors import AttnlabError
from attnlab.fanout.forecast import Forecast, clock
from attnlab.fanout.plan import StagePlan
from attnlab.fanout.seed_groups import SEEDED_STAGE

_DURATION = re.compile(
    r"^(?:(?P<h>\d+(?:\.\d+)?)h)?(?:(?P<m>\d+(?:\.\d+)?)m)?(?:(?P<s>\d+(?:\.\d+)?)s?)?$"
)


def parse_duration(text: str) -> float:
    """Seconds in ``text``: ``90m``, ``2h``, ``1h30m``, ``45s`` or plain seconds (``5400``).

    Raises:
        AttnlabError: ``text`` is no such duration, or not a positive one.
    """
    match = _DURATION.match(text.strip().lower())
    if not text.strip() or match is None:
        raise AttnlabError(
            f"--time-limit: {text!r} is not a duration (e.g. 90m, 2h, 1h30m, or seconds)"
        )
    seconds = sum(
        float(match[unit]) * scale
        for unit, scale in (("h", 3600), ("m", 60), ("s", 1))
        if match[unit]
    )
    if seconds <= 0:
        raise AttnlabError(f"--time-limit: {text!r} is no time at all")
    return seconds


def _companions(plan: StagePlan, name: str) -> list[str]:
    """The planned stages of ``name``'s variant and seed that wait for it (its evaluation)."""
    match = SEEDED_STAGE.match(name)
    if match is None:
        return []
    return [
        other
        for other in plan.order
        if name in plan.needs.get(other, frozenset())
        and (m := SEEDED_STAGE.match(other)) is not None
        and (m["variant"], m["seed"]) == (match["variant"], match["seed"])
    ]


@dataclass
class TimeLimit:
    """Which stages may still start before a deadline, from each stage's predicted cost.

    Attributes:
        seconds: The limit, from ``began``.
        forecast: Each planned stage's predicted seconds on this machine.
        plan: The plan being run (for the units: a training and its readers).
        trials: Sweep stage -> its trials (it advances one trial at a time).
        began: When the slice began (``time.monotonic``; the inputs' rebuild counts too).
    """

    seconds: float
    forecast: Forecast
    plan: StagePlan
    trials: Mapping[str, int] = field(default_factory=dict)
    began: float = field(default_factory=time.monotonic)
    _admitted: set[str] = field(default_factory=set)  # started, or part of a started unit
    _owed_to: dict[str, str] = field(default_factory=dict)  # companion -> its training
    _finished: set[str] = field(default_factory=set)

    @property
    def left_s(self) -> float:
        """Seconds left before the limit."""
        return self.seconds - (time.monotonic() - self.began)

    @property
    def reached(self) -> bool:
        """Whether the limit has passed."""
        return self.left_s <= 0

    def cost(self, name: str) -> float:
        """The predicted seconds ``name`` needs to make progress that a slice keeps."""
        own = self.forecast.seconds.get(name, 0.0)
        if name in self.trials:
            return own / max(1, self.trials[name])  # one trial
        if name in self._admitted:
            return 0.0  # its unit was admitted when its training started
        return own + sum(self.forecast.seconds.get(c, 0.0) for c in _companions(self.plan, name))

    def fits(self, name: str) -> bool:
        """Whether ``name`` may start: it (with its unit) fits, or it is :meth:`owed`."""
        if self.reached:
            return self.owed(name)
        return name in self._admitted or self.cost(name) <= self.left_s

    def note_finished(self, name: str) -> None:
        """Note that ``name`` finished (its companions are owed from now on)."""
        self._finished.add(name)

    def owed(self, name: str) -> bool:
        """Whether ``name`` completes a unit whose training finished: it runs past the limit."""
        return self._owed_to.get(name) in self._finished

    def admit(self, stages: Sequence[str], whole: bool = False) -> tuple[str, ...]:
        """The longest prefix of one launch unit (one process) that fits; recorded as started.

        The stages of one seed group run one after the other in one process, so their
        costs add up. A ``whole`` unit (training that resumes as it began) is admitted whole
        or not at all.
        """
        kept: list[str] = []
        total = 0.0
        for name in stages:
            total += self.cost(name)
            if total > self.left_s and name not in self._admitted:
                break
            kept.append(name)
        if whole and len(kept) < len(stages):
            return ()
        for name in kept:
            self._admitted.add(name)
            for companion in _companions(self.plan, name):
                self._admitted.add(companion)
                self._owed_to[companion] = name
        return tuple(kept)

    def left_line(self, done: Iterable[str]) -> str:
        """``N of M stages current, M-N left (predicted ...); the same command continues``."""
        total = self.plan.considered or len(self.plan.order)
        left = [name for name in self.plan.order if name not in set(done)]
        predicted = clock(self.forecast.time_left(left, {}))
        return (
            f"{total - len(left)} of {total} stages current, {len(left)} left "
            f"(predicted {predicted} on this machine); the same command continues"
        )
