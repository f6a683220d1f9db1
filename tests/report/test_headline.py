"""The headline metrics: few enough columns for `dvc exp show`, keyed by variant, numbers only."""

from pathlib import Path

import yaml

from attnlab.report.claims import FAILS, HOLDS, NOT_RUN, Verdict
from attnlab.report.headline import headline
from attnlab.report.results import Results, Sweep

ROOT = Path(__file__).resolve().parents[2]


def _verdict(status: str) -> Verdict:
    return Verdict(claim=None, status=status, evidence="")  # type: ignore[arg-type]


def test_headline_keeps_the_comparable_numbers_and_drops_tables_and_strings():
    results = Results(
        metrics={
            "ladder-mlp/eval": {"val/ppl": 39.5, "val/bpb": 2.1, "params/total": 1, "protocol": {}},
            "ladder-mlp/train": {"train/loss": 2.9, "device": "cpu"},
            "winograd/closed-one-block": {"winograd/acc": 1.0, "winograd/sentences": 240},
            "winograd/train/closed-one-block": {"train/loss": 0.1},
            "probes/e05": {"e05/var@4": 4.0},
        },
        sweeps={
            "dk": Sweep(best={"val/ppl": 76.4, "params": {"d_head": 9}}, trials=[], figures=())
        },
    )
    verdicts = [_verdict(HOLDS), _verdict(HOLDS), _verdict(FAILS), _verdict(NOT_RUN)]
    assert headline(results, verdicts) == {
        "claims": {"holds": 2, "does_not_hold": 1, "not_run": 1},
        "ladder-mlp": {"val/ppl": 39.5, "val/bpb": 2.1},
        "winograd/closed-one-block": {"winograd/acc": 1.0},
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
