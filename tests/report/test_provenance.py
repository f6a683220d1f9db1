"""Every trained number says where it came from; counts print as the integers they are."""

from attnlab.report.content import cell
from attnlab.report.inputs import Results
from attnlab.report.protocol_lines import protocol, provenance


def test_a_count_read_back_as_a_float_prints_as_an_integer():
    assert cell(263168.0, ",") == "263,168"  # was "263,168.0" in the committed report
    assert cell(1500.0) == "1500"
    assert cell(2.5) == "2.5" and cell(3.0, ".2f") == "3.00"


def test_each_row_names_its_commit_dvc_experiment_and_wandb_run():
    commit = "95ece4eec31222593177532dc31db62a0bd237d2"
    runs = {
        ("depth-1", 1): {"provenance": {"git_commit": commit, "git_dirty": False,
                                        "dvc_experiment": "brisk-lark", "wandb_run": "eg0u2z5l"}},
        ("depth-1", 2): {"provenance": {"git_commit": commit, "git_dirty": False,
                                        "dvc_experiment": "brisk-lark", "wandb_run": None}},
        ("norm-pre", None): {"steps": 1000},
    }  # fmt: skip
    assert provenance(runs) == (
        "commit 95ece4eec312, DVC experiment brisk-lark: depth-1 seed 1 eg0u2z5l, depth-1 seed 2 "
        "no W&B run; not recorded (trained before provenance was kept): norm-pre"
    )


def test_the_protocol_of_a_trained_experiment_carries_the_provenance():
    origin = {"git_commit": "ab" * 20, "git_dirty": True, "dvc_experiment": None,
              "wandb_run": "x1"}  # fmt: skip
    results = Results(metrics={"depth-1/train": {3: {"steps": 6, "provenance": origin}}})
    lines = dict(protocol(results, ["depth-1", "depth-2"]))
    assert lines["provenance"] == (
        "commit abababababab with local changes, DVC experiment none (dvc repro): depth-1 seed 3 x1"
    )
    assert lines["seeds per row"] == "1 (seeds 3)"
