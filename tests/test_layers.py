"""Three layers, and the packages of the library in their order.

``pipeline/<stage>.py`` is what ``dvc.yaml`` runs; its command lives in
``attnlab.stages.<stage>``. ``attnlab`` with every stage loaded has imported no file of
``pipeline/``, no module of the library loads a file by path, and each script holds only
its docstring, the import of its command and the call.

Inside the library, read from every import statement of every module (those inside
functions and under ``TYPE_CHECKING`` too): a trained run is scored while it trains
(``training``), stored (``runs``) and measured after (``evaluation``), and the first and the
last never import each other; what both need (``metrics``, ``runs``) imports neither.
``config`` validates the params and builds nothing, so it imports no package that does.
``report`` lays out and renders; the claim rules and statistics live in ``verdicts``, which
never imports ``report``, and report reads verdicts' types and statistics, never a rule:
what it shows is decided by one call (``verdicts.decide``) before it is laid out. A rule
about a package fails while that package does not exist.
"""

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from import_graph import MODULES, PACKAGE, defining_module, imports, package_of

from attnlab.cli import STAGES

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "pipeline").glob("*.py"))
# The ways Python runs a file by its path rather than a module by its name.
BY_PATH = {"spec_from_file_location", "run_path", "exec_module", "SourceFileLoader"}
PROBE = """
import sys
from typer.testing import CliRunner
from attnlab.cli import STAGES, build_app
app = build_app()  # every stage's module imported
for name in STAGES:
    assert CliRunner().invoke(app, [name, "--help"]).exit_code == 0, name
print("\\n".join(str(getattr(m, "__file__", None) or "") for m in list(sys.modules.values())))
"""


def test_attnlab_with_every_stage_loaded_has_imported_no_stage_script():
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, check=True
    )
    loaded = [Path(line) for line in done.stdout.splitlines() if line]
    assert any(path.match("attnlab/stages/train.py") for path in loaded)  # it did load them
    assert [path for path in loaded if (ROOT / "pipeline") in path.parents] == []


@pytest.mark.parametrize(
    "module", sorted((ROOT / "src" / "attnlab").rglob("*.py")), ids=lambda p: p.name
)
def test_no_library_module_loads_a_file_by_its_path(module):
    tree = ast.parse(module.read_text(encoding="utf-8"))
    names = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    names |= {
        alias.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for alias in n.names
    }
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert names.isdisjoint(BY_PATH) and "pipeline" not in imported


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_a_stage_script_is_its_docstring_and_the_call_into_its_command(script):
    body = ast.parse(script.read_text(encoding="utf-8")).body
    docstring, *imports, guard = body
    assert isinstance(docstring, ast.Expr) and isinstance(docstring.value, ast.Constant)
    modules = sorted(node.module for node in imports if isinstance(node, ast.ImportFrom))
    assert len(modules) == len(imports) == 2
    command = next(m for m in modules if m != "attnlab.stages.command")
    assert modules == sorted(["attnlab.stages.command", command])
    assert command in STAGES.values(), f"{script.name} runs {command}, no stage of attnlab"
    assert isinstance(guard, ast.If) and ast.unparse(guard.test) == "__name__ == '__main__'"
    assert ast.unparse(guard.body[0]) == "run_stage(main)" and len(guard.body) == 1


def test_every_stage_has_its_script():
    commands = {
        next(
            n.module
            for n in ast.parse(s.read_text()).body[1:3]
            if n.module != "attnlab.stages.command"
        )
        for s in SCRIPTS
    }
    assert commands == set(STAGES.values())


def test_only_the_command_line_imports_the_stage_commands():
    library = ROOT / "src" / "attnlab"
    importers = []
    for module in library.rglob("*.py"):
        if (library / "stages") in module.parents or module == library / "cli.py":
            continue
        tree = ast.parse(module.read_text(encoding="utf-8"))
        imported = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        if any(name.startswith("attnlab.stages") for name in imported):
            importers.append(module.relative_to(library))
    assert importers == []


# What builds, trains, measures or decides: config imports none of it.
DOMAIN = {
    "models",
    "training",
    "evaluation",
    "winograd",
    "probes",
    "sweeps",
    "report",
    "data",
    "metrics",
    "runs",
    "verdicts",
}
# report/'s modules that held the claim rules and statistics before verdicts/ did.
RULE_MODULES = ("rules", "claim_rules", "claims", "stats", "robustness", "winograd_claims")


def _imports_between(importer: str, imported: set[str]) -> list[str]:
    """Each import statement of a module of ``importer`` that names a package of ``imported``."""
    return [
        str(found)
        for module in MODULES
        if package_of(module) == importer
        for found in imports(module)
        if package_of(found.target) in imported
    ]


def _exists(package: str) -> None:
    assert (PACKAGE / package / "__init__.py").is_file(), f"attnlab.{package} does not exist"


def test_training_and_evaluation_never_import_each_other():
    found = _imports_between("training", {"evaluation"}) + _imports_between(
        "evaluation", {"training"}
    )
    assert found == [], "training and evaluation import each other:\n" + "\n".join(found)


def test_config_imports_no_package_that_builds_trains_measures_or_decides():
    found = _imports_between("config", DOMAIN)
    assert found == [], "config imports a domain package:\n" + "\n".join(found)


@pytest.mark.parametrize("package", ["metrics", "runs"])
def test_what_training_and_evaluation_share_imports_neither(package):
    _exists(package)
    found = _imports_between(package, {"training", "evaluation"})
    assert found == [], f"{package} imports training or evaluation:\n" + "\n".join(found)


def test_report_holds_no_claim_rule_and_verdicts_never_imports_report():
    left = [name for name in RULE_MODULES if (PACKAGE / "report" / f"{name}.py").exists()]
    assert left == [], f"report/ still decides claims: {left} belong in verdicts/"
    _exists("verdicts")
    found = _imports_between("verdicts", {"report"})
    assert found == [], "verdicts imports report:\n" + "\n".join(found)


# What report may read of verdicts: the decisions' types, the statistics and number format
# its cells print, and the records it lays out (a study's trials, E17's maps).
VERDICT_TYPES = {
    "attnlab.verdicts",
    "attnlab.verdicts.decisions",
    "attnlab.verdicts.stats",
    "attnlab.verdicts.number_format",
    "attnlab.verdicts.sweep_trials",
    "attnlab.verdicts.winograd_maps",
}


def test_report_imports_the_verdicts_types_never_a_rule():
    _exists("verdicts")
    found = [
        f"{found} (defined in {defining_module(found.target, found.name)})"
        for module in MODULES
        if package_of(module) == "report"
        for found in imports(module)
        if package_of(found.target) == "verdicts"
        and defining_module(found.target, found.name) not in VERDICT_TYPES
    ]
    assert found == [], "report imports a rule of verdicts:\n" + "\n".join(found)


@pytest.mark.parametrize("package", ["runs", "evaluation", "metrics"])
def test_what_a_stage_measures_or_stores_takes_values_never_the_params_loader(package):
    _exists(package)
    found = _imports_between(package, {"config"})
    assert found == [], f"{package} imports config (pass it values):\n" + "\n".join(found)
