"""Which stages a fan-out runs, and in what order: DVC's own stage graph, pruned.

Serves the whole catalogue (every experiment of docs/catalogue.md is a set of DVC stages).
The graph and the up-to-date check come from DVC's API (``Repo.index.graph``,
``Repo.status``), never from re-reading ``dvc.yaml``: DVC alone knows what ``foreach``
expands to, which outputs feed which dependencies, and what its lock file records.

A stage is *planned* when DVC says it changed, or when anything upstream of it is planned
(its inputs may change when that runs). A planned stage whose inputs come out unchanged is
skipped by DVC itself when its turn comes, exactly as in a serial ``dvc repro``. With
``allow_missing``, a stage whose only change is data absent here (an output not in the
cache, or an input whose producer is current) is current, as in ``dvc repro
--allow-missing``: a fresh clone of a recorded pipeline plans only what its edits made stale.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from attnlab.errors import AttnlabError

if TYPE_CHECKING:  # DVC is imported where it is used: `attnlab --help` must not pay for it
    from dvc.repo import Repo


@dataclass(frozen=True)
class StagePlan:
    """Planned stages in dependency order, each with the planned stages it waits for.

    Attributes:
        order: Stage names (DVC addressing, e.g. ``train@ladder-mlp-1337``), upstream first.
        needs: For each planned stage, the planned stages that must finish before it.
    """

    order: tuple[str, ...]
    needs: Mapping[str, frozenset[str]] = field(default_factory=dict)

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


def read_plan(
    root: Path, targets: Sequence[str], lock_retries: int = 10, allow_missing: bool = False
) -> StagePlan:
    """Ask DVC which of ``targets`` (and their upstream stages) are not up to date.

    Args:
        root: The DVC project.
        targets: Stage names or ``dvc.yaml`` addresses as ``dvc repro`` takes them; empty
            means every stage of the pipeline.
        allow_missing: Count a stage whose only change is absent data as up to date.
        lock_retries: Attempts while another DVC process holds a lock on a stage's
            outputs (DVC's status takes them too), waiting 1, 2, 4 ... up to 30 s between.

    Raises:
        AttnlabError: DVC cannot read the project or does not know a target.
    """
    # DVC is imported here: `attnlab --help` must not pay for it.
    from dvc.exceptions import DvcException
    from dvc.lock import LockError

    for attempt in range(lock_retries):
        try:
            return _ask_dvc(root, targets, allow_missing)
        except LockError:
            if attempt == lock_retries - 1:
                raise AttnlabError(f"dvc's locks under {root}/.dvc/tmp stayed taken") from None
            time.sleep(min(30.0, 2.0**attempt))
        except DvcException as err:
            raise AttnlabError(
                f"dvc cannot plan {' '.join(targets) or 'the pipeline'}: {_with_mark(err)}"
            ) from None
    raise AssertionError("unreachable: the loop returns or raises")


def _with_mark(err: Exception) -> str:
    """DVC's message, with the problem, line and column of the YAML error behind it, if any.

    DVC says only that a file's "YAML file structure is corrupted"; its cause knows where.
    """
    mark = getattr(err.__cause__, "problem_mark", None)
    if mark is None:
        return str(err)
    problem = getattr(err.__cause__, "problem", None) or "not valid YAML"
    return f"{err}: {problem} at line {mark.line + 1}, column {mark.column + 1}"


@contextlib.contextmanager
def locked_repo(root: Path) -> Iterator[Repo]:
    """DVC's repository at ``root``, read from the root under DVC's repository lock.

    Stage names resolve against the working directory (`dvc repro cost` from a subfolder
    looks for its dvc.yaml there): here they are the root's, wherever attnlab runs. The
    lock is waited for as `dvc --wait-for-lock` does: another DVC command (or a fan-out's
    child recording its stage) holds it while it rewrites dvc.lock, which it truncates
    first. A stage's addressing is relative to the working directory: read it inside.
    """
    from dvc.repo import Repo, lock_repo

    with contextlib.chdir(root), Repo(str(root), _wait_for_lock=True) as repo, lock_repo(repo):
        yield repo


def _ask_dvc(root: Path, targets: Sequence[str], allow_missing: bool) -> StagePlan:
    import networkx as nx

    with locked_repo(root) as repo:
        graph = repo.index.graph  # edge (a, b): stage a depends on stage b
        if targets:
            stages = {
                stage
                for target in targets
                for stage in repo.stage.collect(target, with_deps=True, graph=graph)
            }
        else:
            stages = set(repo.index.stages)
        # One status pass over the targets and what they depend on (none: the pipeline).
        # Asking for each collected stage instead re-reads dvc.yaml per stage and checks
        # a shared upstream stage again for every stage below it: 40 s of planning for
        # the whole pipeline at one seed, against 3 s.
        changed = repo.status(targets=list(targets) or None, with_deps=True)
        if allow_missing:
            # DVC's own test of `dvc repro --allow-missing`, asked only of the stages the
            # status pass named: their upstream stages tell a producer's new output (stale)
            # from one merely absent here (current).
            by_name = {stage.addressing: stage for stage in stages}
            changed = [
                name
                for name in changed
                if name in by_name
                and by_name[name].changed(
                    allow_missing=True, upstream=list(graph.successors(by_name[name]))
                )
            ]
        # Inside the with: a stage's addressing is relative to the working directory.
        sub = graph.subgraph(stages)
        order = [stage.addressing for stage in reversed(list(nx.topological_sort(sub)))]
        upstream = {
            stage.addressing: [dep.addressing for dep in sub.successors(stage)] for stage in stages
        }
    return prune(upstream, (name for name in changed if name in upstream), order)
