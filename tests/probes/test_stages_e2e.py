"""The real ``dvc repro probes cost`` in a throw-away clone, at shrunk sizes."""

import csv
import json
from pathlib import Path

import pytest
import yaml
from tiny_probes import shrink_probes

pytestmark = pytest.mark.slow

EXPERIMENTS = ["e03", "e04", "e05", "e06", "e07", "e10", "e12", "e15", "e19"]


def _declared(root: Path, stage: str) -> list[Path]:
    spec = yaml.safe_load((root / "dvc.yaml").read_text())["stages"][stage]
    entries = [e for kind in ("outs", "metrics", "plots") for e in spec.get(kind, [])]
    return [root / (next(iter(e)) if isinstance(e, dict) else e) for e in entries]


def test_repro_writes_every_declared_output_and_then_has_nothing_to_do(dvc_project):
    dvc_project.edit_params(shrink_probes)
    done = dvc_project.dvc("repro", "probes", "cost")
    assert sorted(dvc_project.ran_stages(done.stdout)) == ["cost", "probes"]
    root = dvc_project.root

    for stage in ("probes", "cost"):
        for path in _declared(root, stage):
            assert path.is_file() or any(path.iterdir()), f"{stage}: {path} is missing or empty"
    metrics_dir = root / "reports/metrics/probes"
    assert sorted(p.stem for p in metrics_dir.glob("*.json")) == EXPERIMENTS
    tables = sorted(p.name.split("_")[0] for p in (root / "reports/tables/probes").glob("*.tsv"))
    assert sorted(set(tables)) == EXPERIMENTS
    e15 = json.loads((metrics_dir / "e15.json").read_text())
    assert e15["e15/total/module"] == 124_439_808

    with (root / "reports/tables/e14_cost.tsv").open() as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    assert [(r["implementation"], r["n"], r["status"]) for r in rows] == [
        (impl, str(n), "ok") for impl in ("naive", "sdpa") for n in (128, 256, 512)
    ]
    cost = json.loads((root / "reports/metrics/cost.json").read_text())
    assert cost["e14/device"] == "cpu" and cost["e14/naive/max_n_reached"] == 512
    assert isinstance(cost["e14/naive/time_slope"], float)

    # Records, not DVC metrics: `dvc exp show` compares the report's headline alone.
    shown = dvc_project.dvc("metrics", "show", "--json").stdout
    assert "e05/var_over_d@64" not in shown and "e14/sdpa/peak_slope" not in shown

    again = dvc_project.dvc("repro", "probes", "cost")
    assert dvc_project.ran_stages(again.stdout) == []
