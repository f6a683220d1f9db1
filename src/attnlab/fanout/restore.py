"""Put back the outputs of the stages a stopped or failed fan-out did not finish.

Serves the fan-out of the whole catalogue (``attnlab repro``). DVC deletes a stage's
outputs before it runs the stage's command, so a stage stopped (Ctrl-C, SIGTERM) or failed
half-way leaves committed results missing from the work tree. Each such output comes back
from where the record keeps it: an uncached output (metrics, tables, figures) from git's
index, a cached one (models, token files) from DVC's cache as ``dvc checkout --force
<stage>`` restores it. Training checkpoints are not outputs (they live under the run
root), so a rerun still continues from them. A persistent output (a sweep's journal) is
left as it is: DVC never deletes it, and it holds the progress the rerun continues from.
"""

import contextlib
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from attnlab.errors import AttnlabError


@dataclass
class Restored:
    """Outputs of unfinished stages, by where they came back from (paths from the root).

    Attributes:
        from_git: Uncached outputs put back as git's index holds them.
        from_cache: Cached outputs put back from DVC's cache, as ``dvc.lock`` records them.
        lost: Outputs with no copy in git or in DVC's cache: a rerun writes them (an
            uncached one's half-written file is removed).
    """

    from_git: list[str] = field(default_factory=list)
    from_cache: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """What was restored, one line per source, for the user."""
        said = [
            (self.from_git, "from git"),
            (self.from_cache, "from DVC's cache"),
            (self.lost, "not restored, no copy in git or DVC's cache (a rerun writes them)"),
        ]
        return [f"{what}: {', '.join(paths)}" for paths, what in said if paths]


def restore_outputs(root: Path, stages: Sequence[str]) -> Restored:
    """Restore every output of ``stages`` to what git's index and ``dvc.lock`` record.

    Only for stages whose outputs DVC deleted (it began running them) and whose command
    has ended: what a stage wrote since is discarded.

    Args:
        root: The DVC project.
        stages: Stage names as the plan has them (``train@ladder-mlp-1337``).

    Raises:
        AttnlabError: DVC or git could not put them back (the message says how to).
    """
    from dvc.exceptions import DvcException

    if not stages:
        return Restored()
    try:
        return _restore(root, stages)
    except (DvcException, OSError, subprocess.CalledProcessError) as err:
        raise AttnlabError(
            f"could not restore them ({err}); `git checkout -- <output>` and "
            f"`dvc checkout --force {' '.join(stages)}` put them back"
        ) from None


def _restore(root: Path, stages: Sequence[str]) -> Restored:
    from dvc.exceptions import CheckoutError
    from dvc.repo import Repo, lock_repo

    restored = Restored()
    # Stage names and the paths DVC reports are relative to the working directory.
    with contextlib.chdir(root), Repo(str(root), _wait_for_lock=True) as repo:
        with lock_repo(repo):
            # A checkout would put the record's journal over the one the stage was writing.
            outs = [
                out
                for name in stages
                for stage in repo.stage.collect(name)
                for out in stage.outs
                if not out.persist
            ]
            for out in outs:
                if not out.use_cache:
                    path = str(out.def_path)
                    back = _from_git(root, path)
                    (restored.from_git if back else restored.lost).append(path)
            if cached := [str(out.def_path) for out in outs if out.use_cache]:
                try:
                    done = repo.checkout(targets=cached, force=True)
                except CheckoutError as err:
                    done = err.result
                    restored.lost += [str(path) for path in err.target_infos]
                restored.from_cache += [*done["added"], *done["modified"]]
    return restored


def _from_git(root: Path, path: str) -> bool:
    """Put ``path`` back exactly as git's index holds it; False when git tracks none of it.

    Either way what the stage wrote there is removed first: an output git has no copy of
    is then absent, as DVC left it before the stage ran.
    """
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--", path], cwd=root, capture_output=True, text=True
    )
    # What the stopped stage wrote goes first: DVC had deleted the output, so a file git
    # does not track there is the stage's, half-written (even where git has no copy).
    target = root / path
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    else:
        target.unlink(missing_ok=True)
    if listed.returncode != 0 or not listed.stdout:
        return False  # not a git repository, or an output never committed
    subprocess.run(["git", "checkout", "--", path], cwd=root, check=True, capture_output=True)
    return True
