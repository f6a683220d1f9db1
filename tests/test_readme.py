"""The README's promises: two set-up commands, CI runs exactly the test one, every command runs.

Every command of the README's ``bash`` blocks is run by a test: the set-up's by CI, the
cheap ones below on a fresh copy of the project, the first hour's by
tests/fanout/test_first_command.py on a tiny record. The reference (docs/reference.md)
holds the rest of the manual; its cheap commands run here too.
"""

import re
import shlex
import subprocess
import sys

from readme_commands import README, ROOT, bash_commands, section

REFERENCE = ROOT / "docs" / "reference.md"
MAX_README_LINES = 250  # what a newcomer reads top to bottom; the rest is the reference's


def _setup_commands() -> list[str]:
    return re.findall(r"```bash\n(.+?)\n```", section("Set-up: two commands"), flags=re.S)


def test_set_up_is_exactly_two_one_line_commands():
    commands = _setup_commands()
    assert len(commands) == 2 and all("\n" not in c for c in commands)
    install_and_run, install_and_test = commands
    assert install_and_run.endswith("attnlab repro")
    assert install_and_test.endswith("pytest")


def test_set_up_says_how_to_install_the_cpu_build_of_the_pinned_torch():
    pin = re.search(r'"(torch==[^"]+)"', (ROOT / "pyproject.toml").read_text()).group(1)
    cpu = f"pip install {pin} --index-url https://download.pytorch.org/whl/cpu"
    assert cpu in section("Set-up: two commands")


def test_ci_runs_the_readmes_test_command_verbatim():
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert _setup_commands()[1] in ci


# The manual's cheap commands, run on a fresh copy of the project with the committed record.
CHEAP = (
    "dvc repro tokenize",
    "dvc dag --mermaid",
    "dvc dag --collapse-foreach-matrix",
    "dvc dag evaluate@norm-pre-1337",
    "dvc repro --allow-missing --dry",
    "dvc status train evaluate",
    "attnlab report",
    "dvc metrics show",
    "dvc exp show --only-changed --drop '^(data|reports|src|pipeline)/|Created'",
    "attnlab --help",
    "attnlab tokenize --help",
)


def test_the_readme_is_short_and_every_command_in_it_is_run_by_a_test():
    lines = README.read_text().splitlines()
    assert len(lines) <= MAX_README_LINES, f"{len(lines)} lines: move reference to docs/"
    run = {*_setup_commands(), *CHEAP, *bash_commands(section("The first hour"))}
    assert set(bash_commands(README.read_text())) <= run


def test_the_cheap_commands_are_the_manuals_own():
    manual = README.read_text() + REFERENCE.read_text()
    for command in CHEAP:
        assert re.search(rf"^{re.escape(command)}( |$)", manual, flags=re.M), command


def _said_width(command: str) -> int:
    """The width the reference gives ``command``'s drawing (``# ..., about 520 columns``)."""
    line = re.search(rf"^{re.escape(command)} .*$", REFERENCE.read_text(), flags=re.M).group(0)
    return int(re.search(r"about ([\d,]+) columns", line).group(1).replace(",", ""))


def test_the_cheap_commands_work_on_a_fresh_clone(dvc_project):
    lock = (ROOT / "dvc.lock").read_text()
    (dvc_project.root / "dvc.lock").write_text(lock)
    dvc_project.run("git", "add", "dvc.lock")
    dvc_project.run("git", "commit", "-qm", "the committed record")
    # A stale training whose model is absent stops the dry run, as the README says.
    out, locks = {}, {}
    for command in CHEAP:
        before = (dvc_project.root / "dvc.lock").read_text()
        out[command] = dvc_project.run(*shlex.split(command), check="--dry" not in command)
        locks[command] = before, (dvc_project.root / "dvc.lock").read_text()
    assert out["dvc dag --mermaid"].stdout.startswith("flowchart TD")
    for view in ("dvc dag --collapse-foreach-matrix", "dvc dag evaluate@norm-pre-1337"):
        width = max(map(len, out[view].stdout.splitlines()))
        said = _said_width(view)
        assert abs(width - said) <= said // 10, f"{view}: {width} columns, the manual says {said}"
    dry = out["dvc repro --allow-missing --dry"]
    assert dry.returncode == 0 or "No such file or directory" in dry.stderr + dry.stdout
    before, after = locks["dvc repro --allow-missing --dry"]
    assert after == before, "--dry runs nothing"
    assert not (dvc_project.root / "data" / "models").exists()
    status = out["dvc status train evaluate"].stdout
    stage, model = "train@norm-pre-1337", "data/models/norm-pre/seed-1337"
    assert f"{stage}:" in status and model in status
    if f"{stage}:" in lock:  # a record run under these stage names: current, model absent
        assert f"not in cache:       {model}" in status
    assert "claims.holds" in out["dvc metrics show"].stdout
    assert "Usage: attnlab" in out["attnlab --help"].stdout


def test_the_whole_graph_is_as_wide_as_the_manual_says():
    # The tests' project keeps one seed: the whole graph is this checkout's, read only.
    done = subprocess.run(
        [sys.executable, "-m", "dvc", "dag"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    width, said = max(map(len, done.stdout.splitlines())), _said_width("dvc dag")
    assert abs(width - said) <= said // 10, f"dvc dag: {width} columns, the manual says {said}"
