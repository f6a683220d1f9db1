"""One recorded training run, as the ``train`` stage makes it: its model, metrics and curves.

The ``train@<variant>-<seed>`` stage and the sweeps' ``sweep-check@<study>-<seed>`` stage
train the same way (resumable, the seeded ``val/ppl`` curve, the whole-split score in the
W&B summary) and write the same files; only where they write differs (:class:`RunFiles`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from torch import Tensor

from attnlab import paths
from attnlab.config.fingerprint import FINGERPRINT, TRAIN, run_configuration
from attnlab.config.loader import Params
from attnlab.data.tokens import check_fits, read_tokens
from attnlab.metrics.bpb import token_byte_lengths
from attnlab.metrics.validation_curve import ValidationCurve
from attnlab.metrics.whole_split import WholeSplitScore
from attnlab.metrics.windows import sample_windows
from attnlab.runs.along_weights import keep_along
from attnlab.runs.curve_files import write_curve
from attnlab.runs.model_folder import save_trained_model
from attnlab.training.fit import train_variant
from attnlab.training.job import TrainJob, run_root_from_env, wandb_dir
from attnlab.training.result import TrainResult


@dataclass(frozen=True)
class RunFiles:
    """Where one run's inputs are read and its outputs written.

    Attributes:
        train_tokens: The train split's token file.
        val_tokens: The validation split's token file.
        tokenizer: The tokenizer (the bytes per token of ``val/bpb``).
        model: The folder of ``model.pt`` and ``config.json``.
        metrics: The folder of ``train.json``.
        curves: The folder of ``train_loss.csv`` and ``val_ppl.csv``.
    """

    train_tokens: Path
    val_tokens: Path
    tokenizer: Path
    model: Path
    metrics: Path
    curves: Path


def validation_curve(
    params: Params, val_tokens: Tensor, block_size: int, curves: Path
) -> ValidationCurve:
    """The run's ``val/ppl`` curve, into ``curves``: params ``evaluate.curve`` and ``seed``.

    Every run scores the same seeded windows (drawn from params ``seed``), at
    ``evaluate.curve.every_steps`` scaled by the budget, ``evaluate.batch_size`` at a time.
    """
    curve = params.evaluate.curve
    return ValidationCurve(
        sample_windows(
            val_tokens, block_size, curve.windows, params.seed, key="evaluate.curve.windows"
        ),
        curve.every(params.budget),
        paths.curve(curves, paths.VAL_PPL),
        params.evaluate.batch_size,
    )


def train_and_record(
    params: Params,
    job: TrainJob,
    files: RunFiles,
    resume: bool = True,
    keep_checkpoint: bool = False,
    along: Sequence[int] = (),
) -> TrainResult:
    """Train ``job`` and write its model, ``train.json`` and curves (rank 0 alone, under DDP).

    The ``val/ppl`` curve uses params ``evaluate.curve`` (the same seeded windows for
    every run, drawn from params ``seed``) and ``evaluate.batch_size``; the resume state
    lives under ``ATTNLAB_RUN_ROOT`` and is removed only once every output is written.
    The weights of the steps ``along`` (:func:`attnlab.training.along_steps.along_steps`) go
    into the model folder's ``along/``, with their manifest.

    Raises:
        TokenFileError: a token file does not fit the model (its block size or vocabulary).
    """
    run_root = run_root_from_env()
    model = job.variant.model
    val_tokens = read_tokens(files.val_tokens)
    check_fits(
        read_tokens(files.train_tokens), files.train_tokens, model.block_size, model.vocab_size
    )
    check_fits(val_tokens, files.val_tokens, model.block_size, model.vocab_size)
    val_points = validation_curve(params, val_tokens, model.block_size, files.curves)
    whole_split = WholeSplitScore(
        val_tokens,
        model.block_size,
        params.evaluate.batch_size,
        token_byte_lengths(files.tokenizer),
    )
    result = train_variant(
        job,
        files.train_tokens,
        run_root,
        wandb_dir(run_root),
        resume=resume,
        keep_checkpoint=keep_checkpoint,
        curve=val_points,
        callbacks=[whole_split],
        along=along,
    )
    if not result.is_global_zero:
        return result  # DDP: rank 0 alone writes the outputs
    save_trained_model(result.model, result.config, files.model)
    if result.along is not None:
        keep_along(result.along, files.model, along)
    # The configuration's fingerprint lets the report tell this run from a stale one.
    fingerprint = run_configuration(job.config(), params).fingerprints[TRAIN]
    paths.write_metrics(
        files.metrics / paths.TRAIN_METRICS,
        {**result.metrics, FINGERPRINT: fingerprint, "provenance": result.provenance},
    )
    write_curve(paths.curve(files.curves, paths.TRAIN_LOSS), result.curve)
    val_points.write()  # a resume at the last step drew no point, and wrote no file
    result.discard_resume_state()  # only now: a failed write above can still resume
    return result
