"""Outputs written all-or-nothing get the permissions any new file gets (the umask's).

Before, every output went through ``mkstemp`` and kept its private mode 0600 whatever the
umask, so a colleague or a web server sharing the results could not read them.
"""

import os
import stat

import pytest

from attnlab.files import write_atomically


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
