"""Why planned stages are stale, read from DVC's own status of a real project."""

from attnlab.fanout import read_plan
from attnlab.fanout.stale import stale_summary


def test_the_summary_gives_dvcs_reasons_by_family(tiny_dvc_project, monkeypatch):
    root = tiny_dvc_project
    monkeypatch.chdir(root)  # DVC resolves stage names from the working directory
    (root / "inputs" / "alpha.txt").write_text("changed")
    plan = read_plan(root, [])
    # alpha's two stages read a changed input; beta-2 and gamma-1 never ran; beta-1 and
    # gamma-2 are current.
    assert set(plan.order) == {"count@alpha-1", "count@alpha-2", "count@beta-2", "count@gamma-1"}
    assert stale_summary(root, plan) == [
        "  count: 4 stages (inputs changed: inputs/alpha.txt; not recorded yet)"
    ]
    (root / "params.yaml").write_text("scale: 0.75\n")
    assert stale_summary(root, read_plan(root, ["count@beta-1"])) == [
        "  count: 1 stage (params changed: scale)"
    ]
