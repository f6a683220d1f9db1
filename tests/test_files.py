"""Outputs written all-or-nothing get the permissions any new file gets (the umask's).

A set of outputs read together (the report's pages and its summary folder) is replaced
whole or not at all.

Before, every output went through ``mkstemp`` and kept its private mode 0600 whatever the
umask, so a colleague or a web server sharing the results could not read them.
"""

import os
import resource
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from attnlab.files import write_atomically, write_together


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_an_output_gets_the_mode_the_umask_gives(tmp_path, umask, mode):
    path = tmp_path / "metrics.json"
    previous = os.umask(umask)
    try:
        write_atomically(path, b"{}")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(path.stat().st_mode) == mode
    assert [p.name for p in tmp_path.iterdir()] == ["metrics.json"]  # no temporary left


def _files_of(folder):
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_set_written_together_replaces_every_file_and_the_folder_s_whole_content(tmp_path):
    (tmp_path / "summary" / "gone").mkdir(parents=True)
    (tmp_path / "summary" / "gone" / "old.json").write_bytes(b"old")
    (tmp_path / "index.html").write_bytes(b"old page")
    write_together(
        {tmp_path / "index.html": b"new page", tmp_path / "REPORT.md": b"new text"},
        {tmp_path / "summary": {"ladder-mlp/eval.json": b"{}"}},
    )
    assert _files_of(tmp_path) == {
        Path("index.html"): b"new page",
        Path("REPORT.md"): b"new text",
        Path("summary/ladder-mlp/eval.json"): b"{}",
    }


WRITE_THREE = """
import sys
from pathlib import Path
from attnlab.errors import AttnlabError
from attnlab.files import write_together
root = Path(sys.argv[1])
try:
    write_together(
        {root / "index.html": b"i" * 50_000, root / "REPORT.md": b"r" * 200_000},
        {root / "summary": {"a/eval.json": b"new"}},
    )
except AttnlabError as err:
    print(err)
"""


def _limit_file_size() -> None:
    # No file may grow past 100 kB: a write beyond fails (EFBIG) as on a full disk.
    resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the error, not the signal's kill


def test_a_set_that_cannot_be_written_whole_leaves_the_old_set_and_no_debris(tmp_path):
    # Before, the report wrote its pages one by one and deleted its summary folder before
    # writing it again: a failure or a kill between left pages of two reports.
    (tmp_path / "summary" / "a").mkdir(parents=True)
    for name, data in {
        "index.html": b"old",
        "REPORT.md": b"old",
        "summary/a/eval.json": b"o",
    }.items():
        (tmp_path / name).write_bytes(data)
    before = _files_of(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", WRITE_THREE, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        preexec_fn=_limit_file_size,
    )
    assert done.stdout.startswith(f"{tmp_path / 'REPORT.md'}: cannot write it"), done.stdout
    assert _files_of(tmp_path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["REPORT.md", "index.html", "summary"]
