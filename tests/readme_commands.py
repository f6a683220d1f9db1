"""The README's commands, as the tests that run them read them (tests/test_readme.py)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def section(heading: str) -> str:
    """The README's section under ``## heading``, up to the next ``## ``."""
    return README.read_text().split(f"## {heading}", 1)[1].split("\n## ", 1)[0]


def bash_commands(text: str) -> list[str]:
    """Each command line of ``text``'s ``bash`` blocks, without its trailing comment."""
    blocks = re.findall(r"```bash\n(.+?)\n```", text, flags=re.S)
    lines = (line.split("  #", 1)[0].strip() for block in blocks for line in block.splitlines())
    return [line for line in lines if line and not line.startswith("#")]
