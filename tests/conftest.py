"""Shared fixtures: the corpus (a local mirror, else the real download), a throw-away project.

The project is a git + DVC copy of this checkout, for running the real ``dvc``.
"""

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch
import yaml

from attnlab.config.files import read_params_mapping, write_params_mapping
from attnlab.data.download import fetch_corpus, sha256_of
from attnlab.errors import CorpusError

PROJECT_ROOT = Path(__file__).resolve().parents[1]


def _corpus_mirror() -> Path | None:
    configured = os.environ.get("ATTNLAB_CORPUS_MIRROR")
    if configured:
        return Path(configured.removeprefix("file://"))
    beside = PROJECT_ROOT.parent / "shared" / "data" / "tinyshakespeare" / "input.txt"
    return beside if beside.is_file() else None


def _downloaded_corpus() -> Path:
    """The corpus from its canonical URL, checksummed, kept in a cache across test runs."""
    download = read_params_mapping(PROJECT_ROOT / "params.yaml")["download"]
    cache = Path(os.environ.get("ATTNLAB_RUN_ROOT", Path.home() / ".cache" / "attnlab"))
    cached = cache / "corpus" / "input.txt"
    if cached.is_file() and sha256_of(cached) == download["sha256"]:
        return cached
    try:
        return fetch_corpus(download["url"], download["sha256"], cached, retries=2)
    except CorpusError as err:
        pytest.fail(f"no corpus for the tests: {err}")


@pytest.fixture
def one_torch_thread(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Torch on one thread, here and in every subprocess started meanwhile.

    Tiny models train fastest on one thread, and a busy machine cannot oversubscribe it:
    two OpenMP threads spinning against other processes on two cores run these models
    twenty times slower. Subprocesses inherit the setting through the environment.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def corpus_mirror() -> Path:
    """A local byte-exact copy of tiny Shakespeare that replaces the network in tests.

    ``ATTNLAB_CORPUS_MIRROR`` (or a ``shared/`` copy beside the checkout) when there is one;
    otherwise the real download, once, into a cache, refused unless its checksum matches.
    """
    mirror = _corpus_mirror()
    if mirror is None:
        return _downloaded_corpus()
    if not mirror.is_file():
        pytest.fail(f"ATTNLAB_CORPUS_MIRROR names {mirror}, which is not a file")
    return mirror


def _project_files() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=PROJECT_ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return [name for name in listed.split("\0") if name and (PROJECT_ROOT / name).is_file()]


class DvcProject:
    """A fresh git repository holding the project's files, for running the real ``dvc``."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.root = root
        self.env = env

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run a command in the project, failing the test with its output on error."""
        done = subprocess.run(args, cwd=self.root, env=self.env, capture_output=True, text=True)
        if check and done.returncode != 0:
            pytest.fail(f"{' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
        return done

    def dvc(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run ``dvc`` from this environment inside the project."""
        return self.run(sys.executable, "-m", "dvc", *args, check=check)

    def edit_params(self, edit: Callable[[dict], None], commit: bool = True) -> None:
        """Change the params files in place, committed so ``dvc exp`` sees a clean baseline.

        ``edit`` gets every params file's sections as one mapping.
        """
        path = self.root / "params.yaml"
        params = read_params_mapping(path)
        edit(params)
        write_params_mapping(path, params)
        if commit:
            self.run("git", "commit", "-qam", "shrink params for the test")

    def fan_out(self, *targets: str, jobs: int = 2) -> list[str]:
        """Run ``attnlab repro --jobs`` on ``targets``: the stages it ran, as they finished.

        The fan-out runs each stage as a real ``dvc repro --single-item`` (tests/fanout
        checks that it records what a serial ``dvc repro`` does), so a test whose subject
        is not the serial order gets independent stages run side by side.
        """
        attnlab = str(Path(sys.executable).parent / "attnlab")
        done = self.run(attnlab, "repro", "--jobs", str(jobs), *targets)
        ran = [line for line in done.stdout.splitlines() if ": ran in " in line]
        return [line.split("] ", 1)[1].split(":", 1)[0] for line in ran]  # "[3/8] <stage>: ..."

    def clone(self, root: Path, commit: str = "HEAD") -> "DvcProject":
        """A ``git clone`` of this project into ``root`` at ``commit``, as another machine gets it.

        Git's files only: no DVC cache, no outputs DVC tracks, no ``.dvc/config.local``.
        """
        self.run("git", "clone", "-q", str(self.root), str(root))
        clone = DvcProject(root, self.env)
        clone.run("git", "checkout", "-q", commit)
        return clone

    def ran_stages(self, output: str) -> list[str]:
        """The stages a ``dvc repro`` / ``dvc exp run`` output says it ran."""
        return [
            line.split("'")[1] for line in output.splitlines() if line.startswith("Running stage '")
        ]


def _keep_the_first_seed(params: Path) -> None:
    """Shorten params ``seeds`` to its first seed, in place, keeping the file's layout.

    The tests train every variant once; a test that needs more seeds adds them.
    """
    text = params.read_text()
    seeds = re.compile(r"^seeds:\n(- \d+\n)(- \d+\n)*", flags=re.M)
    assert seeds.search(text), f"{params} has no block-style seeds list"
    params.write_text(seeds.sub(r"seeds:\n\1", text, count=1))


@pytest.fixture(autouse=True)
def _no_inherited_wandb_service(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stages started by a test start their own W&B service, as they do under DVC.

    A test that runs W&B in this process leaves its service's address in ``WANDB_SERVICE``,
    and every later subprocess would join that one service: a stage killed there leaves
    its run open in it, and the rerun that resumes the run is refused ("run ID is in use").
    """
    monkeypatch.delenv("WANDB_SERVICE", raising=False)


def _project_env(tmp_path: Path, corpus_mirror: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "ATTNLAB_CORPUS_MIRROR": str(corpus_mirror),
        "ATTNLAB_RUN_ROOT": str(tmp_path / "runs"),
        "WANDB_MODE": "offline",
        "WANDB_DIR": str(tmp_path / "wandb"),
        "DVC_NO_ANALYTICS": "1",
        "GIT_AUTHOR_NAME": "attnlab tests",
        "GIT_AUTHOR_EMAIL": "tests@attnlab.invalid",
        "GIT_COMMITTER_NAME": "attnlab tests",
        "GIT_COMMITTER_EMAIL": "tests@attnlab.invalid",
    }


RECORDED_RUN_FAMILIES = ("train@", "train-extra@", "evaluate@", "evaluate-extra@", "sweep-check@")


def _recorded_runs() -> tuple[str, ...]:
    """The outputs of the record's runs: what dvc.lock's stages of ``RECORDED_RUN_FAMILIES`` hold.

    Without the lock they are orphans of no stage, and the record's seeds would join a
    test's runs (three recorded seeds turn a test's n = 1 into n = 3). The record's other
    outputs stay: the report stage reads their folders (reports/tables) as dependencies.
    """
    lock_path = PROJECT_ROOT / "dvc.lock"
    if not lock_path.is_file():
        return ()
    stages = yaml.safe_load(lock_path.read_text())["stages"]
    return tuple(
        out["path"]
        for name, stage in stages.items()
        if name.startswith(RECORDED_RUN_FAMILIES)
        for out in stage.get("outs", [])
    )


def _is_under(name: str, paths: tuple[str, ...]) -> bool:
    return any(name == path or name.startswith(f"{path}/") for path in paths)


def _new_project(tmp_path: Path, corpus_mirror: Path) -> DvcProject:
    root = tmp_path / "project"
    recorded = _recorded_runs()
    for name in _project_files():
        if name == "dvc.lock" or _is_under(name, recorded):
            continue
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(PROJECT_ROOT / name, target)
    _keep_the_first_seed(root / "seeds.yaml")
    project = DvcProject(root, _project_env(tmp_path, corpus_mirror))
    project.run("git", "init", "-q", "-b", "main")
    project.run("git", "add", "-A")
    project.run("git", "commit", "-qm", "project under test")
    return project


@pytest.fixture
def dvc_project(tmp_path: Path, corpus_mirror: Path) -> DvcProject:
    """A copy of the project (tracked and untracked-but-not-ignored files) in a new git repo.

    ``dvc.lock`` and the record's runs are dropped so every stage really runs and a test's
    runs are the only ones, and ``seeds`` holds only its first seed, so each variant trains
    once; ``python`` on the PATH is this test's interpreter, so stage commands import the
    attnlab under test. W&B is offline and writes, like every run artefact, under
    ``tmp_path``.
    """
    return _new_project(tmp_path, corpus_mirror)


@dataclass(frozen=True)
class DataStagesRun:
    """The session's one ``dvc repro tokenize`` in a fresh ``dvc_project``.

    Attributes:
        root: The project, its data stages run and committed.
        ran: The stages that repro ran, in its order (tests/data checks them).
    """

    root: Path
    ran: list[str]


@pytest.fixture(scope="session")
def data_stages_run(tmp_path_factory: pytest.TempPathFactory, corpus_mirror: Path) -> DataStagesRun:
    """A ``dvc_project`` whose data stages ran once, by the real ``dvc repro tokenize``."""
    project = _new_project(tmp_path_factory.mktemp("tokenized"), corpus_mirror)
    ran = project.ran_stages(project.dvc("repro", "tokenize").stdout)
    project.run("git", "add", "-A")
    project.run("git", "commit", "-qm", "the data stages")
    return DataStagesRun(project.root, ran)


@pytest.fixture(scope="session")
def copy_tokenized(
    data_stages_run: DataStagesRun, corpus_mirror: Path
) -> Callable[[Path], DvcProject]:
    """Makes a copy of the session's tokenized project under a given folder.

    The copy has its git history, DVC cache and workspace, but not DVC's locks and state
    under ``.dvc/tmp``; its run artefacts (W&B, checkpoints) go under the same folder.
    """

    def copy(tmp: Path) -> DvcProject:
        root = tmp / "project"
        shutil.copytree(
            data_stages_run.root,
            root,
            symlinks=True,
            ignore=lambda folder, names: ["tmp"] if Path(folder).name == ".dvc" else [],
        )
        return DvcProject(root, _project_env(tmp, corpus_mirror))

    return copy


@pytest.fixture
def tokenized_project(tmp_path: Path, copy_tokenized: Callable[[Path], DvcProject]) -> DvcProject:
    """``dvc_project`` with its data stages (download, bpe, tokenize) run and committed.

    For the tests of what comes after the data: the data stages run once a session
    (tests/data tests that run), and each test gets its own copy of that project
    (:func:`copy_tokenized`).
    """
    return copy_tokenized(tmp_path)
