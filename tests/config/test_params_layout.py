"""params.yaml is laid out the way DVC writes it back, so `dvc exp run -S` changes one line.

`dvc exp run -S key=value` loads params.yaml with ruamel's round-trip loader, applies the
override through OmegaConf, merges the result back and dumps the whole file. Every list
comes back in block style, every null as an empty value, a comment line right after a
list is dropped and a value past column 80 is wrapped. These tests run DVC's own code
(and one real `dvc exp run`) over the real file.
"""

import difflib
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from dvc.utils.hydra import apply_overrides
from dvc.utils.serialize import modify_yaml

from attnlab.config.files import params_files

ROOT = Path(__file__).resolve().parents[2]
PARAMS = ROOT / "params.yaml"
# params.yaml and the files beside it: each is written back by DVC on its own `-S`.
EVERY_FILE = [path.name for path in params_files(PARAMS)]
SEEDS = ROOT / "seeds.yaml"  # lists only: a list override rewrites the list's own lines
LAYOUT_COMMIT_SUBJECT = "params.yaml in the layout dvc exp run -S writes back"


def _scalar_leaves(node: dict, prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, value in node.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict):
            yield from _scalar_leaves(value, dotted + ".")
        elif not isinstance(value, list):
            yield dotted, value


def _another(value: Any) -> str:
    """A different value of the same kind, as an override's text."""
    if isinstance(value, bool):
        return str(not value).lower()
    if isinstance(value, int):
        return str(value + 1)
    if isinstance(value, float):
        return repr(value * 2 or 0.5)
    return "changed"  # strings and nulls


def _changed_lines(before: str, after: str) -> list[str]:
    diff = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
    return [line for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---")]


def _comment(line: str) -> str:
    return line.partition(" #")[2]


def _set(data: dict, dotted: str, value: Any) -> None:
    *parents, leaf = dotted.split(".")
    for part in parents:
        data = data[part]
    data[leaf] = value


@pytest.mark.parametrize("name", EVERY_FILE)
def test_dvcs_serializer_writes_the_file_back_byte_for_byte(tmp_path, name):
    copy = tmp_path / name
    copy.write_text((ROOT / name).read_text())
    with modify_yaml(copy):
        pass  # DVC's load-for-update and dump, with nothing changed
    assert copy.read_text() == (ROOT / name).read_text()


def _batches(leaves: list[tuple[str, Any]]) -> list[list[tuple[str, Any]]]:
    """The leaves in rounds, the n-th round holding the n-th leaf of every mapping.

    Siblings may share a line (a flow mapping), so they never share a round; leaves of
    different mappings sit on lines of their own, so one round's changes can be counted.
    """
    rounds: dict[str, int] = {}
    batches: list[list[tuple[str, Any]]] = []
    for dotted, value in leaves:
        parent = dotted.rpartition(".")[0]
        index = rounds[parent] = rounds.get(parent, -1) + 1
        if index == len(batches):
            batches.append([])
        batches[index].append((dotted, value))
    return batches


def test_the_files_hold_every_knob():
    leaves = [
        leaf
        for name in EVERY_FILE
        for leaf in _scalar_leaves(yaml.safe_load((ROOT / name).read_text()))
    ]
    assert len(leaves) > 200  # the layout tests below walk every one of them


@pytest.mark.parametrize("name", [name for name in EVERY_FILE if name != SEEDS.name])
def test_every_scalar_override_changes_exactly_its_own_line(tmp_path, name):
    # DVC loads and dumps the whole file for any override, so one `-S` list per round
    # finds a rewrite that strays beyond a key's own line as an extra changed line.
    original = (ROOT / name).read_text()
    copy = tmp_path / name
    leaves = list(_scalar_leaves(yaml.safe_load(original)))
    assert leaves
    for batch in _batches(leaves):
        copy.write_text(original)
        overrides = {dotted: _another(value) for dotted, value in batch}
        apply_overrides(copy, [f"{dotted}={text}" for dotted, text in overrides.items()])
        before, after = original.splitlines(), copy.read_text().splitlines()
        assert len(after) == len(before), f"-S {sorted(overrides)} added or dropped lines"
        changed = [(old, new) for old, new in zip(before, after, strict=True) if old != new]
        assert len(changed) == len(batch), f"-S {sorted(overrides)} rewrote: {changed}"
        for old, new in changed:
            assert _comment(new) == _comment(old), f"a comment moved: {old!r} -> {new!r}"
        expected = yaml.safe_load(original)
        for dotted, text in overrides.items():
            _set(expected, dotted, yaml.safe_load(text))
        assert yaml.safe_load(copy.read_text()) == expected, sorted(overrides)


def test_a_list_override_keeps_the_comment_on_its_key(tmp_path):
    copy = tmp_path / "params.yaml"
    copy.write_text(PARAMS.read_text())
    apply_overrides(copy, ["evaluate.lengths=[64,128]"])
    changed = _changed_lines(PARAMS.read_text(), copy.read_text())
    assert changed == ["-  - 256"]
    assert "  lengths:                 # E13's evaluation lengths" in copy.read_text()


def test_a_seeds_override_changes_only_the_list_it_sets(tmp_path):
    copy = tmp_path / SEEDS.name
    copy.write_text(SEEDS.read_text())
    apply_overrides(copy, ["seeds=[1337,1338]", "extra_seeds.seeds=[1340]"])
    changed = _changed_lines(SEEDS.read_text(), copy.read_text())
    assert changed == ["-- 1339", *(f"-  - {seed}" for seed in range(1341, 1347))]


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)


def test_the_layout_rewrite_changed_no_value():
    found = _git("log", "--format=%H", "-F", f"--grep={LAYOUT_COMMIT_SUBJECT}")
    commits = found.stdout.split()
    if found.returncode != 0 or not commits:
        pytest.skip("the git history holding the layout rewrite is not in this checkout")
    commit = commits[-1]
    before = _git("show", f"{commit}^:params.yaml").stdout
    after = _git("show", f"{commit}:params.yaml").stdout
    assert before and after and before != after
    assert yaml.safe_load(after) == yaml.safe_load(before)


def test_a_real_exp_run_changes_one_line_of_params(dvc_project):
    """The line count the issue measured: 123 lines changed by one `-S` before this layout."""
    done = dvc_project.dvc("exp", "run", "-S", "download.retries=5", "download")
    assert "Running stage 'download'" in done.stdout
    numstat = dvc_project.run("git", "diff", "--numstat", "params.yaml").stdout.split()
    assert numstat == ["1", "1", "params.yaml"]
    experiment = dvc_project.run("git", "for-each-ref", "--format=%(refname)", "refs/exps")
    (ref,) = [name for name in experiment.stdout.split() if not name.startswith("refs/exps/exec/")]
    committed = dvc_project.run("git", "diff", "--numstat", "HEAD", ref, "--", "params.yaml")
    assert committed.stdout.split() == ["1", "1", "params.yaml"]
