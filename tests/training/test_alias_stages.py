"""An alias trains nothing: the real ``dvc`` lists no stage for it.

Its rows read the variant's model and metrics (params ``aliases``; docs/catalogue.md, The
trained experiments).
"""

import json

import pytest

from attnlab.config.files import read_params_mapping
from attnlab.verdicts.number_format import fmt

SEED = 1337  # the dvc_project fixture keeps the first seed only
SHARED = "ladder-layernorm"


def _stages(project) -> list[str]:
    return project.dvc("stage", "list", "--name-only").stdout.split()


def test_train_and_evaluate_stages_are_the_variants_and_never_an_alias(dvc_project):
    params = read_params_mapping(dvc_project.root / "params.yaml")
    aliases = params["aliases"]
    assert aliases  # the catalogue has some, or this test checks nothing
    stages = _stages(dvc_project)
    for kind in ("train", "evaluate"):
        listed = {name for name in stages if name.startswith(f"{kind}@")}
        assert listed == {f"{kind}@{v}-{SEED}" for v in params["variants"]}, kind
    assert not [name for name in stages for alias in aliases if f"@{alias}-" in name]


@pytest.mark.slow
def test_the_alias_rows_read_the_one_shared_run(tokenized_project):
    dvc_project = tokenized_project  # the data stages recorded: tests/data runs them
    dvc_project.env["OMP_NUM_THREADS"] = "1"
    dvc_project.env["WANDB_MODE"] = "disabled"

    def shrink(params: dict) -> None:
        params["budget"]["scale"] = 0.001  # 3 steps of P0
        params["model"]["d_model"] = 32
        params["train"]["batch_size"] = 8

    dvc_project.edit_params(shrink)
    root = dvc_project.root
    done = dvc_project.dvc("repro", f"evaluate@{SHARED}-{SEED}")
    assert f"train@{SHARED}-{SEED}" in dvc_project.ran_stages(done.stdout)
    # E08's score statistics are measured on the run E08's d_k = 32 row reads.
    run = root / "reports/metrics" / SHARED / f"seed-{SEED}"
    record = json.loads((run / "eval.json").read_text())
    assert "score_stats" in record["protocol"]

    # What DVC would train next: every other variant once, never an alias's own stage.
    dry = dvc_project.dvc("repro", "--dry", "--glob", "train@*")
    variants = read_params_mapping(root / "params.yaml")["variants"]
    others = {f"train@{v}-{SEED}" for v in variants if v != SHARED}
    assert set(dvc_project.ran_stages(dry.stdout)) == others

    dvc_project.dvc("repro", "--single-item", "report")
    markdown = (root / "reports/REPORT.md").read_text()
    e18 = markdown.split("## E18:", 1)[1].split("\n## ", 1)[0]
    assert "| shared runs (params aliases) | depth-1: same run as ladder-layernorm |" in e18
    one_block = next(line for line in e18.splitlines() if line.startswith("| 1 |"))
    assert f"| {fmt(record['val/ppl'])} (n = 1) |" in one_block
    headline = json.loads((root / "reports/headline.json").read_text())
    assert headline[SHARED]["val/ppl"] == record["val/ppl"] and "depth-1" not in headline
