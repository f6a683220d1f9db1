"""The contract between dvc.yaml, params.yaml, the stage commands and the attnlab command."""

import ast
import shlex
import shutil
from functools import cache
from pathlib import Path

import pytest
from dvc.repo import Repo

from attnlab import result_code
from attnlab.cli import STAGES, build_app
from attnlab.config import load_params
from attnlab.config.extra_seeds import EXTRA
from attnlab.config.files import read_params_mapping

ROOT = Path(__file__).resolve().parents[1]
# Modules every stage uses for plumbing: they change no result, so no stage lists them.
# (attnlab.paths names the files dvc.yaml declares, which tests/test_paths.py checks;
# attnlab.files writes them all-or-nothing, for attnlab.paths and the report alike.)
PLUMBING = {
    "attnlab.config",
    "attnlab.errors",
    "attnlab.files",
    "attnlab.paths",
    "attnlab.stages.command",
}


@cache
def _stages() -> list:
    return list(Repo(str(ROOT)).index.stages)


def _family(stage) -> str:
    """The stage's command: ``train`` for ``train@v-1337`` and ``train-extra@v-1340`` alike."""
    return stage.addressing.split("@")[0].removesuffix(EXTRA)


def _script(stage) -> str:
    words = shlex.split(stage.cmd)
    assert words[0] == "python", f"{stage.addressing}: stages run `python pipeline/<stage>.py`"
    return words[1]


def _declared_params(stage) -> list[str]:
    return [key for dep in stage.params for key in dep.params]


def _lookup(tree: dict, dotted: str) -> object:
    node: object = tree
    for part in dotted.split("."):
        assert isinstance(node, dict) and part in node, f"params.yaml has no {dotted}"
        node = node[part]
    return node


def _stage_module(stage) -> str:
    """The one module under attnlab.stages that the stage's script imports its main from."""
    tree = ast.parse((ROOT / _script(stage)).read_text())
    found = {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and any(alias.name == "main" for alias in node.names)
    }
    assert len(found) == 1, f"{stage.addressing}: imports main from {sorted(found)}"
    return found.pop()


def test_every_stage_runs_the_command_attnlab_registers_for_it():
    for stage in _stages():
        script = _script(stage)
        assert (ROOT / script).is_file(), f"{stage.addressing}: {script} is missing"
        base = _family(stage)
        module = _stage_module(stage)
        assert STAGES.get(base) == module, f"attnlab {base} must run {module}"
        deps = [str(dep.def_path) for dep in stage.deps]
        assert script in deps and str(_module_file(module).relative_to(ROOT)) in deps


def test_every_registered_command_is_a_stage():
    assert set(STAGES) == {_family(stage) for stage in _stages()}


def _definition(stage, variant: str, seed: int) -> tuple:
    """What the stage runs, reads and writes, with its variant and seed written as V and S."""

    def general(text: str) -> str:
        return (
            text.replace(f"seed-{seed}", "seed-S")
            .replace(f"seed {seed}", "seed S")
            .replace(f"--seed {seed}", "--seed S")
            .replace(variant, "V")
        )

    return (
        general(stage.cmd),
        sorted(general(str(dep.def_path)) for dep in stage.deps),
        sorted(general(key) for key in _declared_params(stage)),
        sorted(general(str(out.def_path)) for out in stage.outs),
    )


def test_an_extra_seeds_stage_is_its_familys_stage_under_the_extra_seeds():
    # dvc.yaml's train-extra (and the rest) are its train (...) stage by a YAML merge: the
    # same command, deps, params and outs, over params extra_seeds' variants and seeds
    # (the Winograd models': its winograd_variants and winograd_seeds).
    params = load_params(ROOT / "params.yaml")
    by_name = {stage.addressing: stage for stage in _stages()}
    extra = params.extra_seeds
    assert extra.seeds and extra.variants and extra.winograd_seeds and extra.winograd_variants
    families = {"train": (extra.variants, extra.seeds),
                "evaluate": (extra.variants, extra.seeds),
                "winograd-train": (extra.winograd_variants, extra.winograd_seeds),
                "winograd-score": (extra.winograd_variants, extra.winograd_seeds)}  # fmt: skip
    for family, (variants, seeds) in families.items():
        found = {name for name in by_name if name.startswith(f"{family}{EXTRA}@")}
        assert found == {f"{family}{EXTRA}@{v}-{s}" for v in variants for s in seeds}
        variant, first, seed = variants[0], params.seeds[0], seeds[0]
        main = _definition(by_name[f"{family}@{variant}-{first}"], variant, first)
        assert _definition(by_name[f"{family}{EXTRA}@{variant}-{seed}"], variant, seed) == main


def test_every_declared_param_exists():
    params = read_params_mapping(ROOT / "params.yaml")
    for stage in _stages():
        declared = _declared_params(stage)
        assert declared, f"{stage.addressing} declares no params"
        for key in declared:
            _lookup(params, key)


def _attnlab_imports(script: Path) -> set[str]:
    tree = ast.parse(script.read_text())
    modules = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    modules |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    return {m for m in modules if m and m.startswith("attnlab.") and m not in PLUMBING}


def _module_file(module: str) -> Path:
    path = ROOT / "src" / Path(*module.split("."))
    return path if path.is_dir() else path.with_suffix(".py")


@pytest.mark.parametrize("stage", _stages(), ids=lambda s: s.addressing)
def test_library_code_a_stage_imports_is_one_of_its_deps(stage):
    deps = [ROOT / str(dep.def_path) for dep in stage.deps]
    for module in _attnlab_imports(_module_file(_stage_module(stage))):
        source = _module_file(module)
        assert source.exists(), f"{module} does not exist"
        covered = any(source == dep or dep in source.parents for dep in deps)
        assert covered, f"{stage.addressing} imports {module} but does not list {source}"


def test_every_subcommand_help_says_what_it_reads_and_writes():
    from typer.testing import CliRunner

    app = build_app()
    for name in STAGES:
        result = CliRunner().invoke(app, [name, "--help"])
        assert result.exit_code == 0, result.output
        assert "Reads:" in result.output and "Writes:" in result.output, name


@pytest.mark.parametrize("base", sorted(result_code.STAGES))
def test_a_training_stage_depends_on_exactly_its_result_code(base):
    package = Path("src") / "attnlab"
    expected = {package / part for part in result_code.STAGES[base]}
    stages = [stage for stage in _stages() if stage.addressing.split("@")[0] == base]
    assert stages, f"dvc.yaml has no {base} stage"
    for stage in stages:
        command = Path(_module_file(_stage_module(stage)).relative_to(ROOT))
        code = {Path(str(dep.def_path)) for dep in stage.deps} - {command}
        code = {dep for dep in code if dep.parts[:2] == package.parts}
        assert code == expected, f"{stage.addressing}: code deps differ from result_code"


def test_a_checkpoint_fingerprint_hashes_code_every_training_stage_depends_on():
    for base, parts in result_code.STAGES.items():
        assert set(result_code.WEIGHTS) <= set(parts), f"{base} must depend on the weights' code"


@pytest.mark.parametrize("base", sorted(result_code.RECORDED))
def test_a_recording_stage_states_exactly_the_code_it_depends_on(base):
    # A record's code stamp (result_code.stamp) and DVC must name the same code, so that
    # the report's stale records are the ones `dvc status` calls changed.
    package = Path("src") / "attnlab"
    expected = {package / part for part in result_code.RECORDED[base]}
    stages = [stage for stage in _stages() if _family(stage) == base]
    assert stages, f"dvc.yaml has no {base} stage"
    for stage in stages:
        code = {Path(str(dep.def_path)) for dep in stage.deps}
        code = {dep for dep in code if dep.parts[:2] == package.parts}
        assert code == expected, f"{stage.addressing}: code deps differ from result_code"
        assert (package / result_code.RECORDED[base][0]) == _module_file(
            _stage_module(stage)
        ).relative_to(ROOT)


def test_the_report_depends_on_all_the_code_it_judges_records_by():
    (report,) = [stage for stage in _stages() if stage.addressing == "report"]
    deps = [ROOT / str(dep.def_path) for dep in report.deps]
    for parts in result_code.RECORDED.values():
        for source in result_code.files(parts):
            assert any(source == dep or dep in source.parents for dep in deps), source


def test_an_edit_makes_stale_in_the_report_exactly_the_stages_dvc_reruns(tmp_path, monkeypatch):
    # One module of every part some recording stage lists, edited in a copy of the package:
    # the records the report would leave out (their stamps no longer match) are those of
    # the stages whose dvc.yaml deps hold that module, no more, no fewer.
    package = tmp_path / "attnlab"
    shutil.copytree(result_code.PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(result_code, "PACKAGE", package)
    stamps = {stage: {"code": result_code.stamp(stage)} for stage in result_code.RECORDED}
    parts = {part for listed in result_code.RECORDED.values() for part in listed}
    edited = sorted({result_code.files((part,))[0] for part in parts})
    for module in edited:
        original = module.read_bytes()
        module.write_bytes(original + b"\n# an edit\n")
        now = {stage: result_code.code_digests(stage) for stage in result_code.RECORDED}
        report = {s for s, record in stamps.items() if result_code.changed_parts(record, now)}
        source = ROOT / "src" / "attnlab" / module.relative_to(package)
        dvc = {
            _family(stage)
            for stage in _stages()
            if _family(stage) in result_code.RECORDED
            and any(source == dep or dep in source.parents for dep in _deps(stage))
        }
        assert report == dvc, module.relative_to(package)
        module.write_bytes(original)


def _deps(stage) -> list[Path]:
    return [ROOT / str(dep.def_path) for dep in stage.deps]
