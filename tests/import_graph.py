"""The imports between attnlab's modules, read from their source without running it.

Every import statement counts: those inside functions and under ``TYPE_CHECKING`` too, since
each is a dependency of the module that writes it. :func:`imports` gives them as written
(what the layering rules read); :func:`closure` follows each imported *name* to the module
that defines it, through a package's re-exports and its lazy exports (:mod:`attnlab.lazy`),
so that importing one name of a package does not count as importing all of it.
"""

import ast
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "attnlab"


@dataclass(frozen=True)
class Import:
    """One imported module (or name of it) of one module, where its source says so."""

    module: str  # the importing module
    target: str  # the imported module: ``attnlab.x.y``, or ``attnlab.x.y.z`` for a submodule
    name: str | None  # the name imported from ``target`` (``from target import name``)
    bound: str  # the name the importing module reads it by
    line: int

    def __str__(self) -> str:
        path = MODULES[self.module].relative_to(SRC.parent)
        what = f"from {self.target} import {self.name}" if self.name else f"import {self.target}"
        return f"{path}:{self.line}: {what}"


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()


def package_of(module: str) -> str:
    """The part of attnlab a module belongs to: ``training`` for ``attnlab.training.fit``."""
    return module.split(".")[1] if module != "attnlab" else ""


@cache
def syntax(module: str) -> ast.Module:
    """The parsed source of ``module``."""
    return ast.parse(MODULES[module].read_text(encoding="utf-8"))


@cache
def imports(module: str) -> tuple[Import, ...]:
    """Every attnlab module ``module`` imports, as its statements write it, in source order."""
    found = []
    for node in ast.walk(syntax(module)):
        if isinstance(node, ast.Import):
            found += [
                Import(module, a.name, None, a.asname or a.name, node.lineno) for a in node.names
            ]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                bound, submodule = a.asname or a.name, f"{node.module}.{a.name}"
                if submodule in MODULES:
                    found.append(Import(module, submodule, None, bound, node.lineno))
                else:
                    found.append(Import(module, node.module, a.name, bound, node.lineno))
    attnlab = [i for i in found if i.target == "attnlab" or i.target.startswith("attnlab.")]
    return tuple(sorted(attnlab, key=lambda i: i.line))


@cache
def _lazy_exports(package: str) -> dict[str, str]:
    """A package's lazily exported names, each with the submodule that defines it."""
    owners = {}
    for node in ast.walk(syntax(package)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "lazy_exports":
            table = node.args[1]
            assert isinstance(table, ast.Dict), f"{package}: lazy_exports takes a literal dict"
            for key, names in zip(table.keys, table.values, strict=True):
                for name in ast.literal_eval(names):
                    owners[name] = f"{package}.{ast.literal_eval(key)}"
    return owners


def defining_module(target: str, name: str | None) -> str:
    """The module that defines ``name`` of ``target``, following re-exports."""
    if name is None or MODULES[target].name != "__init__.py":
        return target
    if name in _lazy_exports(target):
        return _lazy_exports(target)[name]
    top_level = {node.lineno for node in syntax(target).body}
    for found in imports(target):  # a re-export: imported at the top of the package
        if found.bound == name and found.line in top_level:
            return defining_module(found.target, found.name)
    return target


def resolved(module: str) -> set[str]:
    """The modules that define what ``module`` imports."""
    return {defining_module(i.target, i.name) for i in imports(module)} - {module}


def closure(starts: set[str], within: Callable[[str], bool] = lambda _: True) -> set[str]:
    """``starts`` and every module ``within`` they import, directly or through others."""
    seen: set[str] = set()
    todo = sorted(starts)
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo += sorted(m for m in resolved(module) - seen if within(m))
    return seen


def _read_names(node: ast.AST) -> set[str]:
    """The names ``node``'s code reads, leaving out annotations (types run no code)."""
    names, todo = set(), [node]
    while todo:
        current = todo.pop()
        if isinstance(current, ast.Name):
            names.add(current.id)
        for field, child in ast.iter_fields(current):
            if field in ("annotation", "returns"):
                continue
            todo += [
                c for c in (child if isinstance(child, list) else [child]) if isinstance(c, ast.AST)
            ]
    return names


def uses(module: str, name: str) -> set[str]:
    """The other modules whose names ``name`` (a function or class of ``module``) reads.

    A name its code reads counts through the module that defines it; a function or class of
    ``module`` itself that it reads is followed into, once. Annotations are left out.
    """
    defined = {
        node.name: node
        for node in syntax(module).body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }
    imported = {i.bound: i for i in imports(module)}
    found, seen, todo = set(), set(), [name]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        for read in _read_names(defined[current]):
            if read in imported:
                found.add(defining_module(imported[read].target, imported[read].name))
            elif read in defined:
                todo.append(read)
    return found - {module}
