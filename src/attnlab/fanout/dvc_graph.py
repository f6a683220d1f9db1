"""DVC's stage graph of a project, read once under DVC's lock and asked many questions.

Serves the fan-out's planning over the whole catalogue (:mod:`~attnlab.fanout.plan`,
:mod:`~attnlab.fanout.phases`). Reading the project is most of a plan's cost: DVC parses
``dvc.lock`` (850 kB of YAML for the record, seconds in pure Python) each time it builds
its index and each time it resolves a target by name, and it parses a params file again for
every stage that declares it (``params.yaml`` about 260 times for the whole pipeline). So
one :class:`DvcGraph` answers every question of one planning step from one parse of the
project: targets are resolved against its stages, each stage is asked DVC's own
``changed`` (what ``dvc repro`` asks before it runs a stage), and params files, dvc.yaml
and dvc.lock are parsed once per distinct text while it is open (:func:`yaml_parsed_once`).
"""

from __future__ import annotations

import contextlib
import copy
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from attnlab.errors import AttnlabError

if TYPE_CHECKING:  # DVC is imported where it is used: `attnlab --help` must not pay for it
    from dvc.repo import Repo
    from dvc.stage import Stage
    from networkx import DiGraph

T = TypeVar("T")
# The suffixes DVC reads params files of with its YAML loader.
_YAML_SUFFIXES = (".yaml", ".yml")


@dataclass
class DvcGraph:
    """One project's stages and their dependency graph, as one read of DVC's index holds them.

    Attributes:
        repo: DVC's repository, opened at the project root (stage addressing is relative
            to the working directory: use it inside :func:`read_graph` only).
        graph: Edge (a, b): stage a depends on stage b (DVC's ``Repo.index.graph``).
    """

    repo: Repo
    graph: DiGraph
    _by_name: dict[str, Stage] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._by_name = {stage.addressing: stage for stage in self.graph}

    def stage(self, name: str) -> Stage | None:
        """The stage with this addressing (``train@ladder-mlp-1337``), if the project has it."""
        return self._by_name.get(name)

    def upstream_of(self, targets: Iterable[str]) -> set[Stage]:
        """``targets`` and every stage they depend on; every stage without targets.

        A target is resolved as ``dvc repro`` resolves it. A stage's name, or the name of a
        ``foreach``/``matrix`` group of the root ``dvc.yaml``, is looked up among the stages
        already read; anything else (a path, ``dvc.yaml:name``) is left to DVC, which
        parses the project's files again for it.
        """
        import networkx as nx

        targets = list(targets)
        if not targets:
            return set(self.graph)
        stages: set[Stage] = set()
        for target in targets:
            named = self._named(target)
            if named is None:
                stages.update(self.repo.stage.collect(target, with_deps=True, graph=self.graph))
                continue
            for stage in named:
                stages.add(stage)
                stages.update(nx.descendants(self.graph, stage))
        return stages

    def _named(self, target: str) -> list[Stage] | None:
        """The stages a stage or group name stands for; None when it is neither."""
        from dvc.parsing import JOIN
        from dvc.stage.utils import is_valid_name

        if target in self._by_name:
            return [self._by_name[target]]
        # A group expands to `<group>@<key>`; a name DVC accepts has no `@` of its own, so
        # only a group's stages start with this.
        group = [stage for name, stage in self._by_name.items() if name.startswith(target + JOIN)]
        return group if group and is_valid_name(target) else None

    def changed(self, stages: Iterable[Stage], allow_missing: bool) -> list[str]:
        """The names of ``stages`` that ``dvc repro`` would run, as it decides it.

        DVC's own test before it runs a stage (``Stage.changed``, given the stage's upstream
        stages, which tell a producer's new output from one merely absent here): it stops
        at the first change, where ``dvc status`` checks every dependency and output.
        """
        return [
            stage.addressing
            for stage in stages
            if stage.changed(allow_missing, upstream=list(self.graph.successors(stage)))
        ]

    def out_of_lock(self, stages: Iterable[Stage]) -> list[str]:
        """The names of ``stages`` with an output here whose hash is not its lock entry's.

        ``dvc repro --allow-missing`` reads an output whose recorded hash is not in the
        cache as absent data, even when the workspace holds it with another hash (a model
        edited or swapped under its entry): such a stage's entry no longer describes what
        its consumers read, so it is stale, not current.
        """
        return [
            stage.addressing
            for stage in stages
            if any(out.hash_info and out.exists and out.changed_checksum() for out in stage.outs)
        ]


def read_graph(
    root: Path, ask: Callable[[DvcGraph], T], what: str = "the pipeline", lock_retries: int = 10
) -> T:
    """``ask`` of the project's :class:`DvcGraph`, read from the root under DVC's lock.

    Args:
        root: The DVC project.
        ask: What to compute from the graph (called inside the lock and the root folder).
        what: The targets, for the error message.
        lock_retries: Attempts while another DVC process holds a lock on a stage's
            outputs (DVC's status takes them too), waiting 1, 2, 4 ... up to 30 s between.

    Raises:
        AttnlabError: DVC cannot read the project or does not know a target.
    """
    from dvc.exceptions import DvcException
    from dvc.lock import LockError

    for attempt in range(lock_retries):
        try:
            with locked_repo(root) as repo, yaml_parsed_once():
                return ask(DvcGraph(repo, repo.index.graph))
        except LockError:
            if attempt == lock_retries - 1:
                raise AttnlabError(f"dvc's locks under {root}/.dvc/tmp stayed taken") from None
            time.sleep(min(30.0, 2.0**attempt))
        except DvcException as err:
            raise AttnlabError(f"dvc cannot plan {what}: {_with_mark(err)}") from None
    raise AssertionError("unreachable: the loop returns or raises")


def _with_mark(err: Exception) -> str:
    """DVC's message, with the problem, line and column of the YAML error behind it, if any.

    DVC says only that a file's "YAML file structure is corrupted"; its cause knows where.
    """
    mark = getattr(err.__cause__, "problem_mark", None)
    if mark is None:
        return str(err)
    problem = getattr(err.__cause__, "problem", None) or "not valid YAML"
    return f"{err}: {problem} at line {mark.line + 1}, column {mark.column + 1}"


@contextlib.contextmanager
def locked_repo(root: Path) -> Iterator[Repo]:
    """DVC's repository at ``root``, read from the root under DVC's repository lock.

    Stage names resolve against the working directory (`dvc repro cost` from a subfolder
    looks for its dvc.yaml there): here they are the root's, wherever attnlab runs. The
    lock is waited for as `dvc --wait-for-lock` does: another DVC command (or a fan-out's
    child recording its stage) holds it while it rewrites dvc.lock, which it truncates
    first. A stage's addressing is relative to the working directory: read it inside.
    """
    from dvc.repo import Repo, lock_repo

    with contextlib.chdir(root), Repo(str(root), _wait_for_lock=True) as repo, lock_repo(repo):
        yield repo


@contextlib.contextmanager
def yaml_parsed_once() -> Iterator[None]:
    """DVC's YAML parsing of params files and of dvc.yaml and dvc.lock, once per text.

    DVC reads a stage's params file whenever it checks the stage (``params.yaml`` about 260
    times for the whole pipeline), and ``dvc.lock`` whenever it resolves a stage by name
    (2 s a time for the record's: ``dvc exp save`` does it once per stage). Each read still
    reads the file, so a file that changes meanwhile is parsed again; each caller gets its
    own copy, as from a parse of its own, and DVC's schema checks still run on it.
    """
    with _params_parsed_once(), _stage_files_parsed_once():
        yield


@contextlib.contextmanager
def _stage_files_parsed_once() -> Iterator[None]:
    """DVC's parser of dvc.yaml and dvc.lock (``strictyaml.parse_yaml``), once per text."""
    from dvc.utils import strictyaml

    parsed: dict[tuple[str, str, str], Any] = {}
    parse = strictyaml.parse_yaml

    def parse_once(text: str, path: str, typ: str = "safe") -> Any:
        if (text, path, typ) not in parsed:  # DVC's own parser: its errors, as they were
            parsed[text, path, typ] = parse(text, path, typ=typ)
        return copy.deepcopy(parsed[text, path, typ])

    strictyaml.parse_yaml = parse_once
    try:
        yield
    finally:
        strictyaml.parse_yaml = parse


@contextlib.contextmanager
def _params_parsed_once() -> Iterator[None]:
    """DVC's YAML params loader, parsing each distinct text of a file once, while open.

    DVC picks its loader by suffix from ``dvc.utils.serialize.LOADERS``; the YAML entries
    are put back on the way out.
    """
    from dvc.utils import serialize

    parsed: dict[tuple[str, str], Any] = {}

    def load(path: str, fs: Any = None, **kwargs: Any) -> Any:
        try:
            with (fs.open if fs else open)(path, encoding="utf-8", **kwargs) as handle:
                text = handle.read()
        except UnicodeDecodeError:
            return serialize.load_yaml(path, fs=fs, **kwargs)  # DVC's own error for it
        if (path, text) not in parsed:  # DVC's own loader: its errors, as they were
            parsed[path, text] = serialize.load_yaml(path, fs=fs, **kwargs)
        return copy.deepcopy(parsed[path, text])

    # .get: LOADERS is a defaultdict, and a lookup would store its default.
    previous = {suffix: serialize.LOADERS.get(suffix) for suffix in _YAML_SUFFIXES}
    serialize.LOADERS.update(dict.fromkeys(_YAML_SUFFIXES, load))
    try:
        yield
    finally:
        for suffix, loader in previous.items():
            if loader is None:
                del serialize.LOADERS[suffix]
            else:
                serialize.LOADERS[suffix] = loader
