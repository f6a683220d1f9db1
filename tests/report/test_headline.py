"""The headline metrics: few enough columns for `dvc exp show`, keyed by variant, numbers only.

A trained value is its mean over seeds, beside the number of seeds ``n``.
"""

from pathlib import Path

import yaml

from attnlab.report.headline import headline
from attnlab.report.inputs import Results, Sweep
from attnlab.verdicts import FAILS, HOLDS, INCONCLUSIVE, NOT_RUN, Verdict

ROOT = Path(__file__).resolve().parents[2]


def _verdict(status: str) -> Verdict:
    return Verdict(claim=None, status=status, evidence="")  # type: ignore[arg-type]


def test_headline_keeps_the_comparable_numbers_and_drops_tables_and_strings():
    mlp = {"val/ppl": 39.5, "val/bpb": 2.1, "params/total": 1, "protocol": {}}
    results = Results(
        metrics={
            "ladder-mlp/eval": {1: mlp, 2: {**mlp, "val/ppl": 40.5, "val/bpb": 2.3}},
            "ladder-mlp/train": {1: {"train/loss": 2.9, "device": "cpu"}},
            "winograd/closed-one-block": {
                s: {"winograd/acc": 1.0, "winograd/sentences": 240} for s in (1, 2, 3)
            },
            "winograd/train/closed-one-block": {1: {"train/loss": 0.1}},
            "probes/e05": {None: {"e05/var@4": 4.0}},
        },
        sweeps={
            "dk": Sweep(best={"val/ppl": 76.4, "params": {"d_head": 9}}, trials=[], figures=())
        },
    )
    verdicts = [_verdict(s) for s in (HOLDS, HOLDS, FAILS, INCONCLUSIVE, NOT_RUN)]
    assert headline(results, verdicts) == {
        "claims": {
            "holds": 2,
            "does_not_hold": 1,
            "inconclusive": 1,
            "stale": 0,
            "not_run": 1,
        },
        "ladder-mlp": {"val/ppl": 40.0, "val/bpb": 2.2, "n": 2},
        "winograd/closed-one-block": {"winograd/acc": 1.0, "n": 3},
        "sweep/dk": {"best/val/ppl": 76.4},
    }


def test_the_headline_is_the_pipelines_only_metrics_file():
    """Every other record is a plain output: as metrics they made 1,232 exp show columns."""
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    declared = {
        stage: [
            next(iter(m)) if isinstance(m, dict) else m
            for m in body.get("do", body).get("metrics", [])
        ]
        for stage, body in stages.items()
    }
    assert {stage: files for stage, files in declared.items() if files} == {
        "report": ["reports/headline.json"]
    }
