"""``attnlab repro -S`` mistakes: one ``error:`` line, exit status 2, the params files as they were.

Before: a misspelt key got only DVC's "Invalid `--set-param` value"; a misspelt variant
after ``+`` was added and trained; a target DVC could not plan left params.yaml changed;
a broken params file under ``attnlab repro`` lost the line and column that the stage
commands give. Each case fails before any stage runs, in a throw-away project.
"""

import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest

from attnlab.config.files import params_files
from attnlab.errors import AttnlabError
from attnlab.fanout.experiment import apply_params

ROOT = Path(__file__).resolve().parents[2]


def _snapshot(root: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in params_files(root / "params.yaml")}


def _repro(project, *args: str) -> subprocess.CompletedProcess[str]:
    attnlab = str(Path(sys.executable).parent / "attnlab")
    return project.run(attnlab, "repro", *args, check=False)


# Each -S mistake and the start of its one error line.
MISTAKES = [
    (
        ["-S", "budget.scal=0.005", "download"],
        "error: -S budget.scal=0.005: Key 'scal' is not in struct (did you mean budget.scale?)",
    ),
    (  # the first override applied, then put back
        ["-S", "budget.scale=0.005", "-S", "winograd.yaml:winograd.train.stpes=5", "bpe"],
        "error: -S winograd.yaml:winograd.train.stpes=5: Key 'stpes' is not in struct "
        "(did you mean winograd.train.steps?)",
    ),
    (
        ["-S", "+variants.ladder-mpl.train.lr=0.002", "download"],
        "error: -S +variants.ladder-mpl.train.lr=0.002: adds a variant ladder-mpl; "
        "did you mean ladder-mlp?",
    ),
    (
        ["-S", "budget.scale=0.005", "evaluate@ladder-mlp-9999"],
        "error: dvc cannot plan evaluate@ladder-mlp-9999: Stage",
    ),
]


def _refused(project, args: list[str]) -> str:
    """The one error line of ``attnlab repro args``, which must change nothing."""
    before = _snapshot(project.root)
    done = _repro(project, *args)
    assert done.returncode == 2, (args, done.stdout + done.stderr)
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, (args, done.stderr)
    assert _snapshot(project.root) == before, args
    assert not (project.root / "dvc.lock").exists(), args  # no stage ran
    return done.stderr


def test_each_set_param_mistake_is_one_line_and_changes_nothing(dvc_project):
    # One project for every case (each leaves it as it was): its copy costs more than a case.
    for args, expected in MISTAKES:
        assert _refused(dvc_project, args).startswith(expected), args

    # A broken params file: the same line and column with and without -S.
    params = dvc_project.root / "params.yaml"
    text = params.read_text()
    line = text[: text.index("  lr: 1.0e-3\n")].count("\n") + 1
    params.write_text(text.replace("  lr: 1.0e-3\n", "  lr: [1.0e-3\n", 1))
    for args in (["download"], ["-S", "budget.scale=0.005", "download"]):
        # The flow sequence opened on the line of lr breaks at the next line's colon.
        assert f"line {line + 1}, column 15" in _refused(dvc_project, args), args


def _copy(tmp_path: Path) -> None:
    for path in params_files(ROOT / "params.yaml"):
        (tmp_path / path.name).write_bytes(path.read_bytes())


def test_a_far_name_is_added_and_a_near_one_only_with_two_pluses(tmp_path):
    _copy(tmp_path)
    out = StringIO()
    added = apply_params(tmp_path, ["+variants.wide-ladder.model.d_model=256"])
    added.announce(["download"], out)
    assert out.getvalue() == (
        "new variant wide-ladder: no target trains it (its runs: train@wide-ladder-1337, "
        "train@wide-ladder-1338, train@wide-ladder-1339)\n"
    )
    added.restore()
    with pytest.raises(AttnlabError, match="write -S [+][+]variants.ladder-mpl.train.lr=0.002"):
        apply_params(tmp_path, ["+variants.ladder-mpl.train.lr=0.002"])
    assert _snapshot(tmp_path) == _snapshot(ROOT)
    near = apply_params(tmp_path, ["++variants.ladder-mpl.train.lr=0.002"])
    out = StringIO()
    near.announce(["download", "train@ladder-mpl-1338"], out)
    assert out.getvalue() == "new variant ladder-mpl: this run trains train@ladder-mpl-1338\n"
