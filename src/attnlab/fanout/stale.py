"""Why the planned stages are stale, told by experiment, not stage by stage.

Serves ``attnlab repro``'s first command on a clone of the record: before it asks for
hours, it says what is stale and why, in a few lines (``train: 186 stages (code changed:
src/attnlab/training, ...)``) rather than three hundred stage names. The reasons are
DVC's own (``Stage.status``, what ``dvc status`` prints): a changed code or data
dependency, changed params, a changed command; or no entry in ``dvc.lock`` yet. As in ``dvc repro
--allow-missing``, data merely absent here (models not in the cache) is no reason; a stage
with no reason of its own runs because a stage it reads runs.
"""

from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from attnlab.fanout.dvc_graph import DvcGraph, read_graph
from attnlab.fanout.plan import StagePlan

CODE = ("src/", "pipeline/")  # a dependency under these is code
ABSENT = ("not in cache", "deleted")  # what allow_missing does not count
SHOWN = 4  # paths or keys named per reason before "+N more"
NEVER_RUN = "not recorded yet"


def reasons(status: list) -> dict[str, set[str]]:
    """One stage's ``Stage.status()`` list as reason -> the paths or params keys behind it."""
    found: dict[str, set[str]] = defaultdict(set)
    for item in status:
        if isinstance(item, str):  # "changed command", "always changed", ...
            found[item].add("")
            continue
        for what, entries in item.items():
            for path, state in entries.items():
                if isinstance(state, dict):  # a params file: key -> state
                    found["params changed"].update(state)
                elif state in ABSENT:
                    continue
                elif what == "changed outs":
                    found["outputs changed"].add(path)
                elif path.startswith(CODE):
                    found["code changed"].add(path)
                else:
                    found["inputs changed"].add(path)
    return found


def family(name: str) -> str:
    """The experiment a stage belongs to: a sweep by its study, others by family."""
    head, _, key = name.partition("@")
    return name if head == "sweep" else head


def _named(values: Iterable[str]) -> str:
    shown = sorted(v for v in values if v)
    if not shown:
        return ""
    more = f", +{len(shown) - SHOWN} more" if len(shown) > SHOWN else ""
    return ": " + ", ".join(shown[:SHOWN]) + more


def summary_lines(by_stage: dict[str, dict[str, set[str]]]) -> list[str]:
    """One line per family: how many stages, and the reasons with what they name."""
    families: dict[str, list[str]] = defaultdict(list)
    for name in by_stage:
        families[family(name)].append(name)
    lines = []
    for group, names in families.items():
        merged: dict[str, set[str]] = defaultdict(set)
        for name in names:
            for reason, what in (by_stage[name] or {"after the stages it reads": {""}}).items():
                merged[reason] |= what
        said = "; ".join(f"{reason}{_named(what)}" for reason, what in sorted(merged.items()))
        count = f"{len(names)} stages" if len(names) > 1 else "1 stage"
        lines.append(f"  {group}: {count} ({said})")
    return lines


def stale_summary(root: Path, plan: StagePlan) -> list[str]:
    """What :func:`summary_lines` says of ``plan``'s stages, read from DVC's status."""

    def ask(graph: DvcGraph) -> dict[str, dict[str, set[str]]]:
        found = {}
        for name in plan.order:
            stage = graph.stage(name)
            if stage is None or not any(out.hash_info for out in stage.outs):
                found[name] = {NEVER_RUN: {""}}  # no lock entry: nothing to compare with
                continue
            # DVC's status is {addressing: [entries]}, and {} when the stage is current.
            found[name] = reasons(next(iter(stage.status().values()), []))
        return found

    return summary_lines(read_graph(root, ask))
