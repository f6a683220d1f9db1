"""What ``attnlab repro`` runs around the stages DVC plans: the inputs first, the views last.

Serves the whole catalogue's first command on a clone of the record. A clone has the
record (``dvc.lock``, the metrics and the report in git) but none of the data: with
``allow_missing`` DVC counts every stage as current, the data stages too, so a stage an
edit made stale would find no tokens to read. The *inputs*, the data every model reads
(the corpus, the tokenizer, the token files, the Winograd sentences: seconds to rebuild),
are therefore rebuilt first wherever they are absent, as a plain ``dvc repro`` would.

The *views* are the stages that read every run: the charts of ``dvc plots`` and the
report with its headline, the metrics ``dvc exp show`` compares. An experiment run on a
few targets (``attnlab repro -S key=value evaluate@...``) ends with them, so that the saved
experiment's metrics and charts show what its runs changed.
"""

from collections.abc import Sequence
from pathlib import Path

from attnlab.fanout.dvc_graph import DvcGraph, read_graph
from attnlab.fanout.launcher import FanOutResult
from attnlab.fanout.plan import StagePlan, plan_of

INPUTS = ("tokenize", "winograd-data")
VIEWS = ("charts", "report")


def first_plan(
    root: Path, targets: Sequence[str], allow_missing: bool
) -> tuple[StagePlan, StagePlan | None]:
    """What runs first: the absent inputs' plan, or, with none absent, the plan itself.

    One read of DVC's project answers both (each read parses ``dvc.lock`` again).

    Args:
        root: The DVC project.
        targets: Stages as ``dvc repro`` takes them (none: the whole pipeline).
        allow_missing: Start from the record (:func:`absent_inputs` run first); False:
            plan as plain ``dvc repro`` does, with no inputs phase.

    Returns:
        The inputs' plan (empty when none is absent) and the plan of ``targets``, None
        when the inputs must run first (the plan is read once they exist).

    Raises:
        AttnlabError: DVC cannot read the project or does not know a target.
    """

    def ask(graph: DvcGraph) -> tuple[StagePlan, StagePlan | None]:
        absent = absent_inputs(graph, targets) if allow_missing else []
        if absent:
            return plan_of(graph, absent), None
        return StagePlan(()), plan_of(graph, targets, allow_missing)

    return read_graph(root, ask, " ".join(targets) or "the pipeline")


def absent_inputs(graph: DvcGraph, targets: Sequence[str]) -> list[str]:
    """The input stages ``targets`` depend on (any, without targets) that are absent here.

    An input is absent when an output of its stage or of a stage upstream of it is not in
    the workspace. Only absence counts: an input present here but not in DVC's cache (a
    cleared cache) is left to the plan, as any other stage is.
    """
    wanted = {stage.addressing for stage in graph.upstream_of(targets)}
    return [
        name
        for name in INPUTS
        if name in wanted
        and any(not out.exists for stage in graph.upstream_of([name]) for out in stage.outs)
    ]


def with_views(plan: StagePlan) -> StagePlan:
    """``plan`` followed by the views it does not hold yet, each after every planned stage."""
    added = tuple(name for name in VIEWS if name not in plan.order)
    before = frozenset(plan.order)
    needs = {**plan.needs, **{name: before for name in added}}
    return StagePlan(plan.order + added, needs, plan.considered)


def merged(first: FanOutResult, then: FanOutResult) -> FanOutResult:
    """One result for two fan-outs run one after the other."""
    return FanOutResult(
        ran=first.ran + then.ran,
        up_to_date=first.up_to_date + then.up_to_date,
        failed=first.failed + then.failed,
        blocked=first.blocked + then.blocked,
        stopped=first.stopped + then.stopped,
        left=first.left + then.left,
        out_of_time=first.out_of_time or then.out_of_time,
        signal=then.signal if then.signal is not None else first.signal,
        logs={**first.logs, **then.logs},
    )
