"""Resume state that survives a kill: atomic checkpoints, RNG state, one fixed file.

Serves every trained experiment of docs/catalogue.md at the story's budget (hours on a CPU).
Three traps of Lightning are closed here (PITFALLS 6 and 7):

- Lightning's checkpoint holds no RNG state: :class:`RngState` adds torch's (CPU and
  CUDA), NumPy's and Python's, and puts them back right before the first resumed step.
- ``ckpt_path="last"`` silently starts over when it finds nothing, and the directory moves
  with the logger's run id: :class:`PeriodicCheckpoint` writes one fixed file, and
  :func:`checkpoint_step` reads it up front, so a corrupt file is an error naming it.
- A kill during ``torch.save`` must not destroy the previous good checkpoint:
  :class:`AtomicCheckpointIO` writes a temporary file, fsyncs it, then renames it over.
- A bit flipped inside a tensor still unpickles, and would resume as different weights:
  each file starts with the SHA-256 of the serialised checkpoint after it, and
  :func:`load_checkpoint_file` refuses a file whose bytes do not match it.

``ModelCheckpoint`` is not used: its version counter, epoch-end saves and top-k
bookkeeping serve model selection, while resume needs exactly one always-valid file.
"""

import hashlib
import io
import logging
import random
from pathlib import Path
from typing import Any

import lightning.pytorch as pl
import numpy as np
import torch
from lightning.pytorch.plugins.io import TorchCheckpointIO
from lightning.pytorch.utilities.exceptions import SIGTERMException
from lightning.pytorch.utilities.rank_zero import rank_zero_only

from attnlab.errors import AttnlabError
from attnlab.files import remove_temporaries, write_atomically

log = logging.getLogger(__name__)
say = rank_zero_only(log.info)  # one line per run, not one per DDP rank

LAST = "last.ckpt"
FINGERPRINT_KEY = "attnlab_fingerprint"
# The first line of every checkpoint file: this prefix, then the SHA-256 (hex) of the rest.
_HEADER = b"attnlab-checkpoint sha256="
_HEADER_LINE = len(_HEADER) + 64 + 1  # prefix, hex digest, newline


class CheckpointError(AttnlabError):
    """A checkpoint cannot be read, or belongs to another configuration."""


class AtomicCheckpointIO(TorchCheckpointIO):
    """Write checkpoints all-or-nothing; name the file when one cannot be read."""

    def save_checkpoint(
        self, checkpoint: dict[str, Any], path: str | Path, storage_options: Any = None
    ) -> None:
        """Serialise, prefix the content hash, and replace ``path`` all-or-nothing.

        Raises:
            WriteError: the disk is full or the folder cannot be written (naming the file).
        """
        if storage_options is not None:
            raise TypeError("AtomicCheckpointIO takes no storage_options")
        buffer = io.BytesIO()
        torch.save(checkpoint, buffer)
        payload = buffer.getbuffer()
        header = _HEADER + hashlib.sha256(payload).hexdigest().encode() + b"\n"
        write_atomically(Path(path), header + payload)

    def load_checkpoint(self, path: str | Path, map_location: Any = None, **kwargs: Any) -> dict:
        """Load a checkpoint, turning any read failure into a :class:`CheckpointError`."""
        return load_checkpoint_file(Path(path))


def load_checkpoint_file(path: Path) -> dict[str, Any]:
    """Read a Lightning checkpoint written by :class:`AtomicCheckpointIO`.

    Raises:
        CheckpointError: the file is truncated, corrupt (its bytes do not match the hash
            written with them) or not a Lightning checkpoint.
    """
    try:
        data = Path(path).read_bytes()
        header, payload = data[:_HEADER_LINE], memoryview(data)[_HEADER_LINE:]
        if not header.startswith(_HEADER):
            raise ValueError("no content hash: not written by attnlab")
        if hashlib.sha256(payload).hexdigest().encode() != header[len(_HEADER) : -1]:
            raise ValueError("its bytes do not match the SHA-256 written with them")
        # Our own files, holding NumPy/Python RNG state: not restricted to weights.
        checkpoint = torch.load(io.BytesIO(payload), map_location="cpu", weights_only=False)
    except Exception as err:
        raise CheckpointError(
            f"{path}: unreadable checkpoint ({type(err).__name__}: {err}). Delete it to "
            "start this run from step 0, or restore a good copy to resume."
        ) from None
    if not isinstance(checkpoint, dict) or "global_step" not in checkpoint:
        raise CheckpointError(f"{path}: not a Lightning checkpoint (no global_step)")
    return checkpoint


def checkpoint_step(path: Path, fingerprint: str) -> int:
    """The global step a checkpoint resumes at, after checking it belongs to this run.

    Raises:
        CheckpointError: unreadable, or written for a different configuration.
    """
    checkpoint = load_checkpoint_file(path)
    found = checkpoint.get(FINGERPRINT_KEY)
    if found != fingerprint:
        raise CheckpointError(
            f"{path}: written for configuration {found!r}, not {fingerprint!r}; "
            "refusing to resume another run's state"
        )
    return int(checkpoint["global_step"])


def resume_point(folder: Path, digest: str, steps: int, resume: bool) -> tuple[Path | None, int]:
    """The checkpoint to resume from and its step, or (None, 0); says which in the log."""
    path = folder / LAST
    if not resume:
        if path.exists() and rank_zero_only.rank == 0:
            path.unlink()
            say("resume off: removed %s, starting from step 0", path)
        return None, 0
    if not path.exists():
        earlier = folder.exists()
        say(
            "no checkpoint at %s%s: starting from step 0",
            path,
            " (an earlier run stopped before its first checkpoint)" if earlier else "",
        )
        return None, 0
    step = checkpoint_step(path, digest)  # raises CheckpointError naming the file
    say("resuming from %s at step %d of %d", path, step, steps)
    return path, step


def remove_stale_temporaries(folder: Path) -> None:
    """Delete half-written temporaries left by a kill during a save (never the checkpoint)."""
    remove_temporaries(folder, LAST)


class RngState(pl.Callback):
    """Carry every RNG state through checkpoints, so dropout resumes mid-stream.

    The states are captured when a checkpoint is written and restored at
    ``on_train_start``: after everything that runs between restore and the first step
    (model transfer, DataLoader creation, which draws from its own generator).
    """

    def __init__(self) -> None:
        self._pending: dict[str, Any] | None = None

    def state_dict(self) -> dict[str, Any]:
        """The current torch (CPU and CUDA), NumPy and Python RNG states."""
        state: dict[str, Any] = {
            "torch": torch.get_rng_state(),
            "numpy": np.random.get_state(),
            "python": random.getstate(),
        }
        if torch.cuda.is_available():
            state["cuda"] = torch.cuda.get_rng_state_all()
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Keep the states until training starts."""
        self._pending = state_dict

    def on_train_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        """Put the checkpoint's RNG states back right before the first resumed step."""
        if self._pending is None:
            return
        torch.set_rng_state(self._pending["torch"])
        np.random.set_state(self._pending["numpy"])
        random.setstate(self._pending["python"])
        if "cuda" in self._pending and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(self._pending["cuda"])
        self._pending = None


class PeriodicCheckpoint(pl.Callback):
    """Write ``<folder>/last.ckpt`` every ``every_n_train_steps`` steps and on SIGTERM.

    SIGTERM (a batch scheduler, ``kill``) reaches us through Lightning at a step boundary,
    where the state is consistent, so it is saved; SIGINT (Ctrl-C, ``dvc queue kill``) is
    turned into SIGTERM during the fit (:mod:`attnlab.training.signals`), so it is too.

    Args:
        folder: The fixed directory of this run's resume state.
        every_n_train_steps: The interval; at most this many steps are redone after a kill.
        fingerprint: Stored in the checkpoint and checked on resume.
    """

    def __init__(self, folder: Path, every_n_train_steps: int, fingerprint: str) -> None:
        self.path = Path(folder) / LAST
        self.every = every_n_train_steps
        self.fingerprint = fingerprint
        self._validated: int | None = None  # the step whose validation ended last

    def on_save_checkpoint(
        self, trainer: pl.Trainer, pl_module: pl.LightningModule, checkpoint: dict[str, Any]
    ) -> None:
        """Stamp every checkpoint with the run's fingerprint."""
        checkpoint[FINGERPRINT_KEY] = self.fingerprint

    def on_train_batch_end(
        self,
        trainer: pl.Trainer,
        pl_module: pl.LightningModule,
        outputs: Any,
        batch: Any,
        batch_idx: int,
    ) -> None:
        """Save when the step count reaches a multiple of the interval (unless it validates)."""
        if self._due(trainer) and not _validates_now(trainer):
            trainer.save_checkpoint(self.path, weights_only=False)

    def on_validation_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        """Save a due step that validates after its validation, so that its point is in.

        A restart skips a validation its checkpoint was saved before (Lightning's
        RESTARTED_ON_TRAIN_BATCH_END), and the curve would lose that point for good.
        """
        if trainer.sanity_checking:
            return
        self._validated = trainer.global_step
        if self._due(trainer):
            trainer.save_checkpoint(self.path, weights_only=False)

    def _due(self, trainer: pl.Trainer) -> bool:
        step = trainer.global_step
        return step % self.every == 0 and step < trainer.max_steps

    def on_train_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        """Save the final state, which a rerun resumes from until the outputs are written.

        A rerun after a failed write then resumes at the last step and trains nothing again.
        """
        trainer.save_checkpoint(self.path, weights_only=False)

    def on_exception(
        self, trainer: pl.Trainer, pl_module: pl.LightningModule, exception: BaseException
    ) -> None:
        """Save on SIGTERM (or SIGINT), raised between steps, unless it cut a validation short.

        A stop that lands in a step's validation (or in the step before it) ends that
        validation early, and a restart skips a validation its checkpoint was saved before
        (as for :meth:`on_validation_end`): the curve would lose that step's point for
        good. The previous checkpoint then stands, and a rerun redoes at most one interval.
        """
        if not isinstance(exception, SIGTERMException) or trainer.global_step == 0:
            return
        step = trainer.global_step
        # The last step validates too, on the curve's request (ValidationCurve).
        last = trainer.enable_validation and step >= trainer.max_steps
        if (_validates_now(trainer) or last) and self._validated != step:
            return
        trainer.save_checkpoint(self.path, weights_only=False)


def _validates_now(trainer: pl.Trainer) -> bool:
    """Whether Lightning's validation loop runs at the end of this step (``val_check_interval``)."""
    interval = trainer.val_check_interval  # an int: steps (check_val_every_n_epoch=None)
    return (
        trainer.enable_validation
        and isinstance(interval, int)
        and trainer.global_step % interval == 0
    )
