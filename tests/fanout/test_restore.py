"""What a stopped fan-out puts back: cached outputs from DVC's cache, never a sweep's journal.

A real DVC project with one stage: a cached output, and a persistent one (what a sweep's
journal is). DVC never deletes a persistent output before it runs the stage, so after a
stop it holds the progress that the rerun continues from.
"""

import subprocess
import sys
from pathlib import Path

from attnlab.fanout.restore import restore_outputs

DVC_YAML = """\
stages:
  study:
    cmd: python -c "open('model.txt', 'w').write('trained'); open('journal.txt', 'a').write('1')"
    outs: [model.txt, journal.txt: {persist: true}]
"""


def _run(root: Path, *args: str) -> None:
    subprocess.run(args, cwd=root, check=True, capture_output=True, text=True)


def test_a_stop_restores_the_cached_output_and_keeps_the_journal_it_was_writing(tmp_path):
    _run(tmp_path, "git", "init", "-q")
    _run(tmp_path, sys.executable, "-m", "dvc", "init", "-q")
    (tmp_path / "dvc.yaml").write_text(DVC_YAML)
    _run(tmp_path, sys.executable, "-m", "dvc", "repro", "-q")
    # The stage ran again and was stopped: DVC deleted model.txt; the journal grew.
    (tmp_path / "model.txt").unlink()
    (tmp_path / "journal.txt").write_text("12")

    restored = restore_outputs(tmp_path, ["study"])

    assert (tmp_path / "model.txt").read_text() == "trained"
    assert restored.from_cache == ["model.txt"] and not restored.lost, restored
    assert (tmp_path / "journal.txt").read_text() == "12"  # before: the record's "1"
