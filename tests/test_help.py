"""Every ``--help`` reads as plain English in an 80-column terminal.

Before, the help was rendered as Markdown: a ``<variant>`` placeholder was taken for an
HTML tag and dropped ("data/winograd/models//seed-/"), and ``attnlab repro --help`` drew
its options in a box whose help column was about 20 characters wide.
"""

import re

import pytest
from typer.testing import CliRunner

from attnlab.cli import STAGES, build_app

MIN_HELP_COLUMN = 35  # characters of an option's help on one line, at 80 columns (was ~20)


def _help(*args: str) -> str:
    result = CliRunner().invoke(build_app(), [*args, "--help"], terminal_width=80)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("command", ["repro", *STAGES])
def test_a_commands_help_keeps_its_placeholders_and_a_wide_help_column(command):
    text = _help(*command.split())
    assert "//" not in text.replace("://", ""), text  # no placeholder dropped from a path
    assert "╭" not in text and "│" not in text, text  # options listed, not boxed
    options = text.split("Options:", 1)[1]
    # Where each option's help starts on its line (after the name, two spaces or more).
    starts = [len(m.group(1)) for m in re.finditer(r"^(  -\S[^\n]*?[ ]{2,})\S", options, re.M)]
    assert starts and all(80 - start >= MIN_HELP_COLUMN for start in starts), options


def test_placeholders_show_in_a_stages_help():
    assert "data/winograd/models/<variant>/seed-<seed>/" in _help("winograd-score")
