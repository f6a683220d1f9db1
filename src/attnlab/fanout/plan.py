"""Which stages a fan-out runs, and in what order: DVC's own stage graph, pruned.

Serves the whole catalogue (every experiment of docs/catalogue.md is a set of DVC stages).
The graph and the up-to-date check come from DVC's API (``Repo.index.graph``,
``Stage.changed``, one read of the project per plan: :mod:`~attnlab.fanout.dvc_graph`),
never from re-reading ``dvc.yaml``: DVC alone knows what ``foreach`` expands to, which
outputs feed which dependencies, and what its lock file records.

A stage is *planned* when DVC says it changed, or when anything upstream of it is planned
(its inputs may change when that runs). A planned stage whose inputs come out unchanged is
skipped by DVC itself when its turn comes, exactly as in a serial ``dvc repro``. With
``allow_missing``, a stage whose only change is data absent here (an output not in the
cache, or an input whose producer is current) is current, as in ``dvc repro
--allow-missing``: a fresh clone of a recorded pipeline plans only what its edits made stale.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from attnlab.fanout.dvc_graph import DvcGraph, read_graph


@dataclass(frozen=True)
class StagePlan:
    """Planned stages in dependency order, each with the planned stages it waits for.

    Attributes:
        order: Stage names (DVC addressing, e.g. ``train@ladder-mlp-1337``), upstream first.
        needs: For each planned stage, the planned stages that must finish before it.
        considered: The stages the plan was chosen from (the targets and their upstream
            stages), planned or current; 0 when not known.
    """

    order: tuple[str, ...]
    needs: Mapping[str, frozenset[str]] = field(default_factory=dict)
    considered: int = 0

    def ready(self, done: Iterable[str], started: Iterable[str]) -> list[str]:
        """Stages not yet started whose planned upstream stages have all finished."""
        finished, taken = set(done), set(started)
        return [
            name
            for name in self.order
            if name not in taken and self.needs.get(name, frozenset()) <= finished
        ]

    def blocked_by(self, failed: Iterable[str]) -> set[str]:
        """Every planned stage downstream of a failed one (it cannot run this time)."""
        blocked = set(failed)
        for name in self.order:  # upstream first, so one pass reaches the whole closure
            if self.needs.get(name, frozenset()) & blocked:
                blocked.add(name)
        return blocked - set(failed)


def prune(
    upstream: Mapping[str, Sequence[str]], changed: Iterable[str], order: Sequence[str]
) -> StagePlan:
    """The plan for stages in ``order`` given each one's upstream stages and DVC's verdict.

    Args:
        upstream: Each stage's direct upstream stages (its dependencies' producers).
        changed: The stages DVC reports as not up to date.
        order: Every candidate stage, upstream first (a topological order).

    Returns:
        The changed stages and everything downstream of them, with the planned stages
        each must wait for (transitively, through unplanned ones too).
    """
    planned: set[str] = set(changed)
    waits: dict[str, set[str]] = {}
    for name in order:
        direct = upstream.get(name, ())
        waits[name] = {u for u in direct if u in planned}
        for above in direct:
            waits[name] |= waits.get(above, set())
        if waits[name]:
            planned.add(name)
    kept = tuple(name for name in order if name in planned)
    return StagePlan(kept, {name: frozenset(waits[name]) for name in kept})


def plan_of(graph: DvcGraph, targets: Sequence[str], allow_missing: bool = False) -> StagePlan:
    """The plan for ``targets`` (every stage without targets) in a project's stage graph.

    Args:
        graph: The project, read once (:func:`~attnlab.fanout.dvc_graph.read_graph`).
        targets: Stage names or ``dvc.yaml`` addresses as ``dvc repro`` takes them.
        allow_missing: Count a stage whose only change is absent data as up to date.
    """
    import networkx as nx

    stages = graph.upstream_of(targets)
    changed = graph.changed(stages, allow_missing)
    # Inside the read: a stage's addressing is relative to the working directory.
    sub = graph.graph.subgraph(stages)
    order = [stage.addressing for stage in reversed(list(nx.topological_sort(sub)))]
    upstream = {
        stage.addressing: [dep.addressing for dep in sub.successors(stage)] for stage in stages
    }
    return dataclasses.replace(prune(upstream, changed, order), considered=len(order))


def read_plan(
    root: Path, targets: Sequence[str], lock_retries: int = 10, allow_missing: bool = False
) -> StagePlan:
    """Ask DVC which of ``targets`` (and their upstream stages) are not up to date.

    Args:
        root: The DVC project.
        targets: Stage names or ``dvc.yaml`` addresses as ``dvc repro`` takes them; empty
            means every stage of the pipeline.
        allow_missing: Count a stage whose only change is absent data as up to date.
        lock_retries: Attempts while another DVC process holds a lock (see
            :func:`~attnlab.fanout.dvc_graph.read_graph`).

    Raises:
        AttnlabError: DVC cannot read the project or does not know a target.
    """
    return read_graph(
        root,
        lambda graph: plan_of(graph, targets, allow_missing),
        " ".join(targets) or "the pipeline",
        lock_retries,
    )
