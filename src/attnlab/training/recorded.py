"""One recorded training run, as the ``train`` stage makes it: its model, metrics and curves.

The ``train@<variant>-<seed>`` stage and the sweeps' ``sweep-check@<study>-<seed>`` stage
train the same way (resumable, the ``val/ppl`` curve, the whole-split score in the
W&B summary) and write the same files; only where they write differs (:class:`RunFiles`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from torch import Tensor

from attnlab import paths, result_code
from attnlab.config.fingerprint import FINGERPRINT, TRAIN, run_configuration
from attnlab.config.loader import Params
from attnlab.data.tokens import check_fits, read_tokens
from attnlab.metrics.bpb import token_byte_lengths
from attnlab.metrics.validation_curve import ValidationCurve, of_split
from attnlab.metrics.whole_split import WholeSplitScore
from attnlab.runs.along_weights import keep_along
from attnlab.runs.curve_files import write_curve
from attnlab.runs.model_folder import save_trained_model
from attnlab.training.fit import train_group
from attnlab.training.group import FitOptions, Member
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
        stage: The stage whose code ``train.json`` states it was trained by
            (:data:`attnlab.result_code.RECORDED`).
    """

    train_tokens: Path
    val_tokens: Path
    tokenizer: Path
    model: Path
    metrics: Path
    curves: Path
    stage: str


def validation_curve(
    params: Params, val_tokens: Tensor, block_size: int, curves: Path
) -> ValidationCurve:
    """The run's ``val/ppl`` curve, into ``curves``: the whole split at each point.

    Points come every ``evaluate.curve.every_steps`` scaled by the budget (never closer
    than ``evaluate.curve.min_every_steps``), ``evaluate.batch_size`` windows at a time.
    """
    return of_split(
        val_tokens,
        block_size,
        params.evaluate.curve.every(params.budget),
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
    """Train ``job`` and write its model, ``train.json`` and curves: a group of one.

    As :func:`train_and_record_group`, for a single run.
    """
    (result,) = train_and_record_group(
        params, [RecordedRun(job, files, tuple(along))], resume, keep_checkpoint
    )
    return result


@dataclass(frozen=True)
class RecordedRun:
    """One run to train and record: its job, its files, the steps whose weights it keeps."""

    job: TrainJob
    files: RunFiles
    along: tuple[int, ...] = ()


def train_and_record_group(
    params: Params,
    runs: Sequence[RecordedRun],
    resume: bool = True,
    keep_checkpoint: bool = False,
) -> list[TrainResult]:
    """Train ``runs`` (one, or a seed group) in one fit; write each one's outputs.

    Each run writes its model, ``train.json`` and curves (rank 0 alone, under DDP), as its
    single run would. The ``val/ppl`` curve scores the whole validation split at the
    points params ``evaluate.curve`` sets, ``evaluate.batch_size`` windows at a time; the
    resume state lives under ``ATTNLAB_RUN_ROOT`` and is removed only once every output of
    every run is written. The weights of the steps ``along``
    (:func:`attnlab.training.along_steps.along_steps`) go into the model folder's
    ``along/``, with their manifest.

    Raises:
        TokenFileError: a token file does not fit the model (its block size or vocabulary).
    """
    run_root = run_root_from_env()
    first = runs[0]
    model = first.job.variant.model
    val_tokens = read_tokens(first.files.val_tokens)
    train_tokens = first.files.train_tokens
    check_fits(read_tokens(train_tokens), train_tokens, model.block_size, model.vocab_size)
    check_fits(val_tokens, first.files.val_tokens, model.block_size, model.vocab_size)
    token_bytes = token_byte_lengths(first.files.tokenizer, first.files.val_tokens)
    curves = [validation_curve(params, val_tokens, model.block_size, r.files.curves) for r in runs]
    batch_size = params.evaluate.batch_size
    members = [
        Member(
            run.job,
            curve,
            (WholeSplitScore(val_tokens, model.block_size, batch_size, token_bytes),),
            run.along,
        )
        for run, curve in zip(runs, curves, strict=True)
    ]
    options = FitOptions(
        train_tokens, run_root, wandb_dir(run_root), resume=resume, keep_checkpoint=keep_checkpoint
    )
    results = train_group(members, options)
    if not results[0].is_global_zero:
        return results  # DDP: rank 0 alone writes the outputs
    for run, curve, result in zip(runs, curves, results, strict=True):
        _record(params, run, curve, result)
    for result in results:  # only now: a failed write above can still resume
        result.discard_resume_state()
    return results


def _record(params: Params, run: RecordedRun, curve: ValidationCurve, result: TrainResult) -> None:
    """Write one run's model (and along weights), ``train.json`` and curves."""
    files = run.files
    save_trained_model(result.model, result.config, files.model)
    if result.along is not None:
        keep_along(result.along, files.model, run.along)
    # The configuration's fingerprint lets the report tell this run from a stale one.
    fingerprint = run_configuration(run.job.config(), params).fingerprints[TRAIN]
    paths.write_metrics(
        files.metrics / paths.TRAIN_METRICS,
        {
            **result.metrics,
            **curve.best(),  # early stopping's point (the catalogue's early-stopping protocol)
            FINGERPRINT: fingerprint,
            result_code.CODE: result_code.stamp(files.stage),
            "provenance": result.provenance,
        },
    )
    write_curve(paths.curve(files.curves, paths.TRAIN_LOSS), result.curve)
    curve.write()  # a resume at the last step drew no point, and wrote no file
