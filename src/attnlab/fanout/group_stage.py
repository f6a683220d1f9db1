"""Reproduce the stages of one variant's seeds in one process, then record each stage.

``python -m attnlab.fanout.group_stage [--allow-missing] <family>@<variant>-<seed> ...`` is
what the fan-out runs for a seed group (:mod:`~attnlab.fanout.seed_groups`). It does what
``dvc repro --single-item`` does for each stage, with DVC's bookkeeping shared:

1. Under DVC's repository lock, it asks DVC which of the stages changed (a stage that did
   not is skipped, as DVC skips it), notes the hash of every dependency and deletes their
   outputs. A stage whose outputs DVC's cache holds for these inputs is checked out from
   it instead of run, as DVC does (its own lock entry, else the run cache).
2. Without the lock, it runs their commands. Train stages train together: the first
   stage's command with every seed (``--seed a --seed b ...``), which
   :mod:`attnlab.stages.train` trains as one group, writing each run's outputs where its
   own stage would. Any other family runs its stages' commands one after the other, each
   in a warm fork of this process (:mod:`~attnlab.fanout.warm_commands`: the imports are
   paid once), and stops at the first that fails.
3. Under the lock again, for the stages whose commands succeeded, it checks that no
   dependency changed meanwhile (params.yaml, the tokens, the code: a changed one would be
   recorded against outputs it did not make), then saves, commits and records each stage
   as DVC's own repro does: the same ``dvc.lock`` entry (one write for all,
   :mod:`~attnlab.fanout.lock_entries`), the outputs in the cache and in the run cache, and
   ``dvc.lock`` staged for git where ``core.autostage`` asks.

It prints DVC's own lines (``Running stage '...'``, ``... didn't change, skipping``) and
``Recorded '...' in dvc.lock`` per stage, which the fan-out reads per stage. SIGTERM
reaches the running command (training saves its state); a stage whose command did not
succeed is not recorded, and the fan-out restores its deleted outputs.
"""

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from attnlab.errors import AttnlabError
from attnlab.fanout.dvc_graph import locked_repo
from attnlab.fanout.lock_entries import write_lock_entries
from attnlab.fanout.seed_groups import SEEDED_STAGE, TRAIN_STAGE, stage_seed
from attnlab.fanout.warm_commands import run_command


def group_command(commands: Sequence[str], seeds: Sequence[int]) -> str:
    """The first stage's command with every seed: ``... --seed a --seed b ...``.

    Raises:
        AttnlabError: a command is not the first one with its own seed in place.
    """
    first, seed = commands[0], seeds[0]
    if f"--seed {seed}" not in first:
        raise AttnlabError(f"not a train stage's command (no --seed {seed}): {first}")
    for command, other in zip(commands, seeds, strict=True):
        if command != first.replace(f"--seed {seed}", f"--seed {other}"):
            raise AttnlabError(f"the stages' commands differ beyond the seed: {command}")
    return first + "".join(f" --seed {other}" for other in seeds[1:])


def _dependency_hashes(stage: Any) -> list[tuple[str, Any]]:
    """Every dependency of ``stage`` and its hash now (params: their values)."""
    return [(str(dep), dep.get_hash()) for dep in stage.deps]


def _changed_stages(repo: Any, names: Sequence[str], allow_missing: bool) -> list[Any]:
    """The stages among ``names`` that DVC would run; says which it skips."""
    graph = repo.index.graph
    changed = []
    for name in names:
        (stage,) = repo.stage.collect(name)
        upstream = list(graph.successors(stage))
        if stage.changed(allow_missing=allow_missing, upstream=upstream):
            changed.append(stage)
        else:
            print(f"Stage '{name}' didn't change, skipping", flush=True)
    return changed


def _restored_from_cache(repo: Any, stage: Any) -> bool:
    """Whether DVC's cache had ``stage``'s outputs for these inputs, now checked out.

    As ``dvc repro`` does before it runs a command: from the stage's own ``dvc.lock``
    entry when only its outputs are missing here, else from the run cache. DVC says so
    (``Stage '...' is cached - skipping run``).
    """
    from dvc.stage.cache import RunCacheNotFoundError

    try:
        repo.stage_cache.restore(stage)
    except RunCacheNotFoundError:
        return False
    return True


def _commands(stages: Sequence[Any]) -> list[tuple[str, list[Any]]]:
    """What to run for ``stages`` (one family and variant), each with the stages it makes.

    Raises:
        AttnlabError: train stages whose commands differ beyond the seed.
    """
    if not stages or TRAIN_STAGE.match(stages[0].addressing) is None:
        return [(stage.cmd, [stage]) for stage in stages]
    seeds = [stage_seed(stage.addressing) for stage in stages]
    return [(group_command([stage.cmd for stage in stages], seeds), list(stages))]


def _record(root: Path, names: Sequence[str], before: dict[str, Any], allow_missing: bool) -> int:
    """Save, commit and record the stages ``names`` whose dependencies are as ``before``."""
    with locked_repo(root) as repo, repo.scm_context:
        stages = [repo.stage.collect(name)[0] for name in names]
        moved = [s.addressing for s in stages if _dependency_hashes(s) != before[s.addressing]]
        if moved:
            print(
                f"ERROR: a dependency of {', '.join(moved)} changed while it ran; "
                "nothing was recorded: rerun to run on what is there now",
                file=sys.stderr,
            )
            return 1
        for stage in stages:
            stage.save(allow_missing=allow_missing, run_cache=True)
            stage.commit(allow_missing=allow_missing)
        write_lock_entries(repo, stages)
    for name in names:
        print(f"Recorded '{name}' in dvc.lock", flush=True)
    return 0


def reproduce_group(root: Path, names: Sequence[str], allow_missing: bool = False) -> int:
    """Bring the stages ``names`` (one family and variant) up to date; the exit status.

    Raises:
        AttnlabError: the names are not one family and variant's stages.
    """
    matches = [SEEDED_STAGE.match(name) for name in names]
    keys = {(match["family"], match["variant"]) if match else None for match in matches}
    if None in keys or len(keys) != 1:
        raise AttnlabError(f"not the stages of one family and variant: {', '.join(names)}")
    from dvc.progress import Tqdm

    # tqdm's monitor thread (started by DVC's first progress bar) would be in this process
    # when its commands fork (warm_commands): a fork copies a lock it may hold, not it.
    Tqdm.monitor_interval = 0
    with locked_repo(root) as repo:
        stages = _changed_stages(repo, names, allow_missing)
        if not stages:
            return 0
        _commands(stages)  # a group that cannot run as one is refused before any work
        before = {stage.addressing: _dependency_hashes(stage) for stage in stages}
        made: list[str] = []
        for stage in stages:
            print(f"Running stage '{stage.addressing}':", flush=True)
            stage.remove_outs(ignore_remove=False, force=False)
            if _restored_from_cache(repo, stage):
                made.append(stage.addressing)
        commands = _commands([stage for stage in stages if stage.addressing not in made])
    status = 0
    for command, covered in commands:
        print(f"> {command}", flush=True)
        status = run_command(command, root)
        if status != 0:
            break
        made += [stage.addressing for stage in covered]
    recorded = _record(root, made, before, allow_missing) if made else 0
    return status or recorded


def main(argv: Sequence[str] | None = None) -> None:
    """The command line: ``[--allow-missing] STAGE...``; exits with the commands' status."""
    parser = argparse.ArgumentParser(prog="python -m attnlab.fanout.group_stage")
    parser.add_argument("--allow-missing", action="store_true")
    parser.add_argument("stages", nargs="+")
    args = parser.parse_args(argv)
    try:
        sys.exit(reproduce_group(Path.cwd(), args.stages, args.allow_missing))
    except AttnlabError as err:
        print(f"ERROR: {err}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
