"""A fan-out with changed params, recorded as a DVC experiment that ``dvc exp show`` lists.

Serves quick passes and knob changes over the whole catalogue (``attnlab repro -S
budget.scale=0.01``). ``dvc exp run -S`` runs its stages one at a time; here the same
overrides are applied to the params files with DVC's own override code (the same grammar,
the same rejection of unknown keys, the same file written back), validated by attnlab's
loader before any stage starts, and after the fan-out the workspace is saved as an
experiment with ``dvc exp save``: the params, ``dvc.lock`` and metrics DVC committed. A
mistaken override is one line (:mod:`~attnlab.fanout.overrides`). A run that is not saved
(refused, stopped, failed, cut by a time limit) puts the params files back as they were:
otherwise the next plain run would train with the knob, unannounced. A saved one leaves
the experiment applied, as ``dvc exp run`` does, and says so in one line with the way back.
"""

import contextlib
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from attnlab.errors import AttnlabError, ParamsError
from attnlab.fanout.dvc_graph import yaml_parsed_once
from attnlab.fanout.lock_entries import dvc_writes_lock_entries_in_place
from attnlab.fanout.overrides import added_variant, check_added_variant, key_of, refusal

# DVC names what it runs with this variable in `dvc exp run`; training records it (W&B
# run names, the model's config.json), so the fan-out's children get it too.
EXPERIMENT_VARIABLE = "DVC_EXP_NAME"


def experiment_name(requested: str | None) -> str:
    """``requested``, or a fresh name in DVC's own style (``adj-noun``)."""
    if requested:
        return requested
    from dvc.repo.experiments.utils import gen_random_name

    return gen_random_name()


@dataclass
class ParamsChange:
    """``-S`` overrides applied to the params files, to be undone if the run never starts.

    Attributes:
        originals: Each changed file's bytes before the change.
        added: The variants the overrides add, each with its runs' train stages.
        overrides: The ``-S`` overrides, as given.
        lock: ``dvc.lock``'s bytes before the run (None: there was none).
    """

    originals: dict[Path, bytes] = field(default_factory=dict)
    added: dict[str, tuple[str, ...]] = field(default_factory=dict)
    overrides: tuple[str, ...] = ()
    lock: bytes | None = None

    def restore(self) -> None:
        """Put every changed file back as it was, byte for byte."""
        for path, data in self.originals.items():
            path.write_bytes(data)

    def files(self, root: Path) -> list[str]:
        """The changed params files, relative to ``root``."""
        return [path.relative_to(root).as_posix() for path in self.originals]

    def put_back(self, root: Path, out: TextIO) -> None:
        """Restore the params of a run that was not saved, and say what it leaves behind.

        Args:
            root: The DVC project; the stages that finished with the changed params keep
                what they recorded in its ``dvc.lock``.
            out: Where the line goes.
        """
        if not self.originals:
            return
        self.restore()
        line = f"-S not kept (no experiment saved): {', '.join(self.files(root))} put back"
        lock = root / "dvc.lock"
        if (lock.read_bytes() if lock.is_file() else None) != self.lock:
            line += (
                "; the stages that finished keep what they recorded with it "
                "(`git checkout -- dvc.lock reports` drops that; the same command continues)"
            )
        print(line, file=out, flush=True)

    def applied_line(self, root: Path, name: str) -> str:
        """One line: the work tree holds experiment ``name``, and the way back to HEAD."""
        files = " ".join(self.files(root))
        return (
            f"the work tree holds experiment {name} ({' '.join(self.overrides)}); "
            f"back to the record: git checkout -- {files} dvc.lock reports && git clean -fq reports"
        )

    def announce(self, planned: Sequence[str], out: TextIO) -> None:
        """Say which runs of each added variant this run trains (``planned``: its stages)."""
        for variant, runs in self.added.items():
            trained = [stage for stage in runs if stage in planned]
            if trained:
                print(f"new variant {variant}: this run trains {', '.join(trained)}", file=out)
            else:
                print(
                    f"new variant {variant}: no target trains it (its runs: {', '.join(runs)})",
                    file=out,
                )


def apply_params(root: Path, overrides: Sequence[str]) -> ParamsChange:
    """Apply ``-S`` overrides (``key=value``, ``file:key=value``) as ``dvc exp run`` does.

    The params files are first read by attnlab's loader (a YAML error names its line and
    column), each override is applied alone with DVC's own code (so a refusal names it),
    and the result is loaded by the typed loader. On any error every file is put back to
    its original bytes before any stage runs. A key of a file beside params.yaml given
    without its file (``winograd.train.steps=500``) is refused with the spelling DVC needs
    (``winograd.yaml:winograd.train.steps=500``), and a ``+`` that adds a variant one or
    two edits from an existing name is refused as a likely typo.

    Returns:
        What changed: the original bytes (for :meth:`ParamsChange.restore`) and the
        variants added, with their runs.

    Raises:
        AttnlabError: a params file is broken, DVC rejects an override (DVC's reason and
            the closest existing key are named), or the changed params are invalid.
    """
    from dvc.exceptions import DvcException
    from dvc.utils.cli_parse import to_path_overrides
    from dvc.utils.hydra import apply_overrides

    from attnlab.config import load_params
    from attnlab.config.extra_seeds import seeded_stage
    from attnlab.config.files import DEFAULT_FILE, read_params_mapping

    before = read_params_mapping(root / DEFAULT_FILE)
    lock = root / "dvc.lock"
    change = ParamsChange(
        overrides=tuple(overrides), lock=lock.read_bytes() if lock.is_file() else None
    )
    added: list[str] = []
    try:
        for name, changes in to_path_overrides(overrides).items():
            path = root / name
            change.originals.setdefault(path, path.read_bytes())
            for one in changes:
                _check_file_of(name, one)
                added += _added_variants(name, one, before)
                try:
                    apply_overrides(path, [one])
                except DvcException as err:
                    shown = one if name == DEFAULT_FILE else f"{name}:{one}"
                    raise refusal(shown, one, err, before) from None
        try:
            params = load_params(root / DEFAULT_FILE)
        except ParamsError as err:
            raise AttnlabError(f"-S {' '.join(overrides)}: {err}") from None
    except BaseException:
        change.restore()  # a refused -S leaves nothing behind, nor does Ctrl-C meanwhile
        raise
    for variant in dict.fromkeys(added):
        # dvc.yaml's train stages: one per variant and seed, `train@<variant>-<seed>`.
        change.added[variant] = tuple(
            seeded_stage("train", variant, seed, params.seeds) for seed in params.seeds_of(variant)
        )
    return change


def _added_variants(name: str, change: str, before: dict) -> list[str]:
    """The variant ``change`` of file ``name`` adds, refused if it is near an existing name."""
    from attnlab.config.files import DEFAULT_FILE

    variants, aliases = before.get("variants") or {}, before.get("aliases") or {}
    variant = added_variant(change, variants) if name == DEFAULT_FILE else None
    if variant is None or variant in aliases:  # an alias given knobs: the loader refuses
        return []
    check_added_variant(change, variant, [*variants, *aliases])
    return [variant]


def _check_file_of(name: str, change: str) -> None:
    """Refuse a key given to params.yaml that a file beside it holds, naming that file."""
    from attnlab.config.files import DEFAULT_FILE, file_of

    if name != DEFAULT_FILE:
        return
    key = key_of(change)
    home = file_of(key.partition(".")[0])
    if home != DEFAULT_FILE:
        raise AttnlabError(f"{key} is a key of {home}: write -S {home}:{change}")


def save_experiment(root: Path, name: str, stages: Sequence[str]) -> None:
    """Record the workspace as experiment ``name`` (``dvc exp save``).

    Args:
        root: The DVC project.
        name: The experiment's name (an existing one is replaced).
        stages: The stages whose outputs DVC caches; without them ``dvc exp save`` caches
            every stage's and fails on any output the workspace lacks (a partial run).

    Raises:
        AttnlabError: DVC could not save it (its message is included).
    """
    from dvc.exceptions import DvcException
    from dvc.repo import Repo

    try:
        # As `dvc exp save --force --name NAME STAGE...`, in this process, so that its
        # commit of each stage writes the stage's lock entry in place (lock_entries).
        with (
            contextlib.chdir(root),
            Repo(str(root)) as repo,
            dvc_writes_lock_entries_in_place(),
            yaml_parsed_once(),  # DVC resolves each target against a fresh parse of dvc.lock
        ):
            # An output git does not track yet (a new summary file) is the experiment's too.
            outputs = [
                str(out.def_path)
                for stage in stages
                for found in repo.stage.collect(stage)
                for out in found.outs
                if not out.use_cache
            ]
            repo.experiments.save(
                targets=list(stages),
                name=name,
                force=True,
                include_untracked=_untracked(root, outputs),
            )
    except DvcException as err:
        raise AttnlabError(f"dvc exp save --name {name} failed: {err}") from err


def _untracked(root: Path, paths: Sequence[str]) -> list[str]:
    """The files under ``paths`` that git does not track and does not ignore."""
    if not paths:
        return []
    listed = subprocess.run(
        ["git", "ls-files", "--others", "--exclude-standard", "-z", "--", *paths],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return [path for path in listed.stdout.split("\0") if path]
