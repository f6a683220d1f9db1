"""The report stage replaces its pages and its summary folder as one set, or leaves them.

Before, it wrote ``index.html``, ``REPORT.md`` and ``demo.html`` one after another and
deleted ``reports/summary`` before writing it again: a kill or a full disk in between left
pages of two reports, or a page cut short.
"""

import json
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from report_fabricate import write_run

ROOT = Path(__file__).resolve().parents[2]
PARAMS_FILES = ("params.yaml", "seeds.yaml", "sweeps.yaml", "winograd.yaml", "probes.yaml")
OUTPUTS = ("index.html", "REPORT.md", "demo.html", "headline.json", "summary")


def _limit_file_size() -> None:
    # No file may grow past 100 kB (the page is larger): a write beyond fails as on a full disk.
    resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the error, not the signal's kill


def _report(root: Path, **options) -> subprocess.CompletedProcess[str]:
    script = ROOT / "pipeline" / "report.py"
    return subprocess.run(
        [sys.executable, str(script)], cwd=root, capture_output=True, text=True, **options
    )


def _outputs(reports: Path) -> dict[str, bytes]:
    found = {}
    for name in OUTPUTS:
        path = reports / name
        files = sorted(path.rglob("*")) if path.is_dir() else [path]
        found |= {str(f.relative_to(reports)): f.read_bytes() for f in files if f.is_file()}
    return found


def test_a_report_that_cannot_be_written_whole_leaves_the_last_one_whole(tmp_path):
    for name in (*PARAMS_FILES, "runtime.yaml"):
        shutil.copy(ROOT / name, tmp_path / name)
    reports = write_run(tmp_path / "reports")
    assert _report(tmp_path, check=True).returncode == 0
    last = _outputs(reports)
    assert len(last["index.html"]) > 100_000 and any(k.startswith("summary/") for k in last)
    # A new measurement, so the next report differs in every output.
    eval_json = reports / "metrics/ladder-mlp/seed-1/eval.json"
    eval_json.write_text(json.dumps({**json.loads(eval_json.read_text()), "val/ppl": 7.5}))
    done = _report(tmp_path, preexec_fn=_limit_file_size)
    assert done.returncode == 2, done.stderr
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .startswith("error: reports/index.html: cannot write it")
    )
    assert _outputs(reports) == last
    assert not [p.name for p in reports.iterdir() if p.name.startswith(".")]  # no debris
