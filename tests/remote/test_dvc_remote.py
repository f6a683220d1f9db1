"""A DVC remote round trip: what one machine trained, another pulls and never retrains.

Clone A trains a run that keeps weights along training (E11's norm-post), a Winograd model
and a two-trial study on a tiny budget, commits the record (dvc.lock and the git-tracked
records) and runs ``dvc push --run-cache`` to the remote: a folder (a shared filesystem's,
which every machine can test) and a real OpenSSH server on loopback (sshd.py), through
dvc-ssh. Clone C of the record pulls: its ``dvc repro`` runs only the Winograd maps
(the demo's), which read the pulled model, and optuna-dashboard opens the pulled journal.

DVC 3.67 keeps a stage out of the run-cache when an output is ``cache: false`` and not a
metric or plot (treeverse/dvc#8738), as every training stage's git-tracked records are, or
``persist`` (the sweep journal). Those travel through the committed dvc.lock. The run-cache
carries the rest: clone B, from before A's data stages were recorded, restores them from it.
"""

import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from wsgiref.util import setup_testing_defaults

import pytest
import yaml
from optuna_dashboard import wsgi
from sshd import find_sshd, ssh_server

from attnlab.catalogue import protocol_variants_of

pytestmark = pytest.mark.slow

SEED = 1337  # the first of params seeds, the one seed the tests' project keeps
ALONG = "norm-post"  # a row of E11, which keeps its weights along training
WINOGRAD = "closed-two-blocks"  # the model of the demo's attention maps
TRAINED = (f"train@{ALONG}-{SEED}", f"winograd-train@{WINOGRAD}-{SEED}", "sweep@dk")
OUTS = (f"data/models/{ALONG}/seed-{SEED}", f"data/winograd/models/{WINOGRAD}/seed-{SEED}")
JOURNAL = "data/sweeps/dk.journal"
RUN_CACHED = ("download", "bpe")  # the data stages without a git-tracked output


def _shrink(params: dict) -> None:
    params["budget"]["scale"] = 0.002  # norm-post's 1000 steps become 2, dk's 1500 become 3
    params["model"]["d_model"] = 32
    params["train"]["batch_size"] = 8
    for name in (ALONG, *protocol_variants_of(ALONG)):  # a row moves with its protocols
        params["variants"][name]["model"]["n_layer"] = 2
    params["winograd"]["model"]["d_model"] = 16
    params["winograd"]["variants"] = {WINOGRAD: params["winograd"]["variants"][WINOGRAD]}
    params["extra_seeds"].update(seeds=[], variants=[], winograd_variants=[])  # its rows are cut
    params["sweeps"]["workers"] = 1
    study = params["sweeps"]["studies"]["dk"]
    study.update(trials=2)  # its reference trial and one sampled
    params["sweeps"]["studies"] = {"dk": study}


def _digests(root: Path, folder: str) -> dict[str, str]:
    files = sorted(p for p in (root / folder).rglob("*") if p.is_file())
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


def _run_cached_commands(storage: Path) -> set[str]:
    """The commands of the stage runs that a remote's run-cache holds."""
    return {yaml.safe_load(entry.read_text())["cmd"] for entry in storage.glob("runs/*/*/*")}


def _dashboard(journal: Path, route: str) -> dict:
    """What optuna-dashboard's JSON API answers on ``route`` for ``journal`` (its own app)."""
    environ: dict = {"PATH_INFO": route}
    setup_testing_defaults(environ)
    status = []
    app = wsgi(str(journal))
    body = b"".join(app(environ, lambda line, headers, exc_info=None: status.append(line)))
    assert status == ["200 OK"], body
    return json.loads(body)


@dataclass(frozen=True)
class Remote:
    """A DVC remote: its URL, the folder it writes to, and the key to log in (if any)."""

    url: str
    storage: Path
    keyfile: Path | None = None

    def add(self, project, *flags: str) -> None:
        """Add it to ``project`` as the default remote ``store``; the key stays local."""
        project.dvc("remote", "add", *flags, "-d", "store", self.url)
        self.log_in(project)

    def log_in(self, project) -> None:
        """This machine's key, in ``project``'s config.local (none for a folder)."""
        if self.keyfile is not None:
            project.dvc("remote", "modify", "--local", "store", "keyfile", str(self.keyfile))


@pytest.fixture(params=["folder", "ssh"])
def remote(request, tmp_path: Path) -> Iterator[Remote]:
    """A folder, or an SSH server: without sshd a skip, or a failure where CI requires it."""
    if request.param == "folder":
        yield Remote(str(tmp_path / "store"), tmp_path / "store")
        return
    if find_sshd() is None and not os.environ.get("ATTNLAB_REQUIRE_SSHD"):
        pytest.skip("no sshd: apt-get install openssh-server (ATTNLAB_REQUIRE_SSHD=1 fails)")
    with ssh_server(tmp_path / "sshd") as running:
        yield Remote(running.url, running.storage, running.keyfile)


def test_a_clone_pulls_what_another_trained_and_reruns_nothing(
    remote, tokenized_project, tmp_path, one_torch_thread
):
    a = tokenized_project  # the data stages recorded: tests/data runs them
    a.env["WANDB_MODE"] = "disabled"  # W&B has its own tests
    unrecorded = a.run("git", "rev-list", "--max-parents=0", "HEAD").stdout.strip()
    a.edit_params(_shrink)
    # The team's remote is in git; each machine's key stays in its own config.local.
    remote.add(a)
    ran = a.ran_stages(a.dvc("repro", *TRAINED).stdout)
    assert sorted(ran) == sorted([*TRAINED, "winograd-data"])
    a.run("git", "add", "-A")
    a.run("git", "commit", "-qm", "the record and the team's remote")
    a.dvc("push", "--run-cache")
    assert _run_cached_commands(remote.storage) == {
        f"python pipeline/{stage}.py" for stage in RUN_CACHED
    }

    c = a.clone(tmp_path / "c")
    remote.log_in(c)
    # A clone holds none of the record's models; pushed where they are not either, DVC
    # lists each one's hash (exit 0), unless told -q (docs/reference.md, the remote).
    c.dvc("remote", "add", "--local", "empty", str(tmp_path / "empty"))
    loud = c.dvc("push", "-r", "empty")
    assert "md5: " in loud.stdout + loud.stderr, loud.stdout + loud.stderr
    quiet = c.dvc("push", "-q", "-r", "empty")
    assert quiet.stdout + quiet.stderr == "", quiet.stdout + quiet.stderr
    c.dvc("pull", "--with-deps", *TRAINED, "winograd-maps")
    repro = c.dvc("repro", *TRAINED, "winograd-maps").stdout
    # Nothing retrained; the demo's maps (new to C's lock) ran, reading the pulled model.
    assert c.ran_stages(repro) == ["winograd-maps"], repro
    for folder in OUTS:
        assert _digests(c.root, folder) == _digests(a.root, folder)
    assert (c.root / OUTS[0] / "along/step-000000.pt").is_file()  # weights along training
    assert (c.root / JOURNAL).read_bytes() == (a.root / JOURNAL).read_bytes()
    [study] = _dashboard(c.root / JOURNAL, "/api/studies")["study_summaries"]
    assert study["study_name"] == "sweep-dk"
    trials = _dashboard(c.root / JOURNAL, f"/api/studies/{study['study_id']}")["trials"]
    assert [trial["state"] for trial in trials] == ["Complete", "Complete"]

    b = a.clone(tmp_path / "b", unrecorded)  # no dvc.lock, nor the remote in git
    remote.add(b, "--local")
    repro = b.dvc("repro", "--pull", RUN_CACHED[-1]).stdout
    assert b.ran_stages(repro) == [], repro
    for stage in RUN_CACHED:
        assert f"Stage '{stage}' is cached - skipping run" in repro
    tokenizer = "data/tokenizer/tokenizer.json"
    assert (b.root / tokenizer).read_bytes() == (a.root / tokenizer).read_bytes()
