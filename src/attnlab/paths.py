"""Where every artifact of the pipeline lives, and how its metrics files are written and read.

The one place that names the files ``dvc.yaml`` declares (the stages' ``deps`` and
``outs``): the corpus, tokenizer and token files of P0, the trained models, the metrics of
every experiment of docs/catalogue.md, its curves, tables and figures, the sweeps and the
Winograd task (E16, E17). Paths are relative to the project root, where DVC runs a stage;
a contract test checks them against ``dvc.yaml``. A trained run's files live under
``<variant>/seed-<seed>``: the stage's name (``train@<variant>-<seed>``) read as folders.

Every metrics file is written by :func:`write_metrics` (indented JSON in the record's key
order, a final newline, all-or-nothing) and read back by :func:`read_metrics`. Only the
standard library is imported here: the stages that never train import this too.
"""

import json
import math
from pathlib import Path
from typing import Any

from attnlab.errors import AttnlabError
from attnlab.files import write_atomically

DATA = Path("data")
REPORTS = Path("reports")

# P0's data: the corpus, its tokenizer and its two token splits.
RAW_CORPUS = DATA / "raw" / "input.txt"
TOKENIZER = DATA / "tokenizer" / "tokenizer.json"
TOKENIZER_MANIFEST = TOKENIZER.with_name("manifest.json")  # its SHA-256 (attnlab.runs.manifest)
TOKENS = DATA / "tokens"
TRAIN_TOKENS = TOKENS / "train.parquet"
VAL_TOKENS = TOKENS / "val.parquet"

# The report's inputs: every stage writes under one of these folders.
METRICS = REPORTS / "metrics"
CURVES = REPORTS / "curves"
TABLES = REPORTS / "tables"
FIGURES = REPORTS / "figures"
SWEEPS = REPORTS / "sweeps"
CORPUS_METRICS = METRICS / "corpus.json"

# The computed experiments (E03-E07, E10, E12, E15, E19) and E14's cost.
PROBE_METRICS = METRICS / "probes"
PROBE_TABLES = TABLES / "probes"
COST_METRICS = METRICS / "cost.json"
COST_TABLE = TABLES / "e14_cost.tsv"

# Trained runs: the model folders, and the names of the files each run writes.
MODELS = DATA / "models"
TRAIN_METRICS = "train.json"
EVAL_METRICS = "eval.json"
TRAIN_LOSS = "train_loss"
VAL_PPL = "val_ppl"
# train.json's record of its val_ppl curve's lowest point: what early stopping would keep.
BEST_STEP = "best/step"
BEST_PPL = "best/val/ppl"

# The sweeps: each study's journal and, for sweep-check, its best trial retrained.
STUDIES = DATA / "sweeps"
CHECK_MODELS = STUDIES / "check"
CHECK = "sweep-check"
BEST_TRIAL = "best.json"
TRIALS = "trials.csv"
SWEEP_FIGURES = "figures"

# The Winograd task: both tasks' sentences, their models and their records.
WINOGRAD_DATA = DATA / "winograd"
WINOGRAD_MODELS = WINOGRAD_DATA / "models"
WINOGRAD_METRICS = METRICS / "winograd"
WINOGRAD_DATA_METRICS = WINOGRAD_METRICS / "data.json"
WINOGRAD_TABLES = TABLES / "winograd"
WINOGRAD_MAPS = WINOGRAD_TABLES / "maps.json"
WINOGRAD_MAPS_TABLE = WINOGRAD_TABLES / "maps.tsv"

# The charts `dvc plots show` draws: one file per chart of the catalogue.
CHARTS = REPORTS / "charts"

# The report's own outputs.
REPORT_INDEX = REPORTS / "index.html"
REPORT_MARKDOWN = REPORTS / "REPORT.md"
DEMO = REPORTS / "demo.html"
HEADLINE = REPORTS / "headline.json"
SUMMARY = REPORTS / "summary"


def seed_label(seed: int) -> str:
    """``seed-<seed>``: how a run's seed names its output folders, checkpoints and W&B run."""
    return f"seed-{seed}"


def run(name: str, seed: int) -> Path:
    """``<name>/seed-<seed>``: the relative folder of one run's files in every tree."""
    return Path(name, seed_label(seed))


def model_dir(variant: str, seed: int) -> Path:
    """The trained model's folder (``model.pt``, ``config.json``) of ``train@variant-seed``."""
    return MODELS / run(variant, seed)


def metrics_dir(variant: str, seed: int) -> Path:
    """The folder of a trained run's ``train.json`` and ``eval.json``."""
    return METRICS / run(variant, seed)


def curves_dir(variant: str, seed: int) -> Path:
    """The folder of a trained run's curves (``train_loss.csv``, ``val_ppl.csv``)."""
    return CURVES / run(variant, seed)


def run_folders(variant: str, seed: int) -> tuple[Path, Path, Path]:
    """The model, metrics and curves folders of ``train@variant-seed``."""
    return model_dir(variant, seed), metrics_dir(variant, seed), curves_dir(variant, seed)


def train_metrics(variant: str, seed: int) -> Path:
    """The ``train`` stage's record of one run."""
    return metrics_dir(variant, seed) / TRAIN_METRICS


def eval_metrics(variant: str, seed: int) -> Path:
    """The ``evaluate`` stage's record of one run."""
    return metrics_dir(variant, seed) / EVAL_METRICS


def curve(folder: Path, name: str) -> Path:
    """The CSV of curve ``name`` (:data:`TRAIN_LOSS`, :data:`VAL_PPL`) in a run's curves folder."""
    return folder / f"{name}.csv"


def probe_metrics(experiment: str) -> Path:
    """The metrics of one computed experiment (``e05``)."""
    return PROBE_METRICS / f"{experiment}.json"


def probe_table(stem: str) -> Path:
    """One computed experiment's tidy table (``e05_dot_products``)."""
    return PROBE_TABLES / f"{stem}.tsv"


def figure(name: str) -> Path:
    """A figure a measuring stage draws itself (``e14_cost.png``)."""
    return FIGURES / name


def study_journal(study: str) -> Path:
    """The embedded Optuna journal of ``study`` (or its snapshot, under a shared database)."""
    return STUDIES / f"{study}.journal"


def sweep_folder(study: str) -> Path:
    """The reports of ``study``: ``best.json``, ``trials.csv`` and ``figures/``."""
    return SWEEPS / study


def best_trial(study: str) -> Path:
    """``best.json`` of ``study``: the best trial, what ``sweep-check`` retrains."""
    return sweep_folder(study) / BEST_TRIAL


def check_folders(study: str, seed: int) -> tuple[Path, Path, Path]:
    """The model, metrics and curves folders of ``sweep-check@study-seed``, as a run's."""
    label = run(study, seed)
    return CHECK_MODELS / label, METRICS / CHECK / label, CURVES / CHECK / label


def winograd_task(task: str) -> Path:
    """Every sentence of one Winograd task (``leaky``, ``closed``) with its split."""
    return WINOGRAD_DATA / f"{task}.parquet"


def winograd_model_dir(variant: str, seed: int) -> Path:
    """The model folder of ``winograd-train@variant-seed``."""
    return WINOGRAD_MODELS / run(variant, seed)


def winograd_train_metrics(variant: str, seed: int) -> Path:
    """The ``winograd-train`` stage's record of one run."""
    return WINOGRAD_METRICS / "train" / variant / f"{seed_label(seed)}.json"


def winograd_score_metrics(variant: str, seed: int) -> Path:
    """The ``winograd-score`` stage's record of one run."""
    return WINOGRAD_METRICS / variant / f"{seed_label(seed)}.json"


def winograd_curve(variant: str, seed: int) -> Path:
    """The train-loss curve of ``winograd-train@variant-seed``."""
    return CURVES / "winograd" / variant / f"{seed_label(seed)}.csv"


def winograd_accuracy_curve(variant: str, seed: int) -> Path:
    """The held-out accuracy along training of ``winograd-train@variant-seed``."""
    return CURVES / "winograd" / variant / seed_label(seed) / "accuracy.csv"


def chart(name: str) -> Path:
    """The long-format CSV of the catalogue's chart ``name`` (``E02-train-loss``)."""
    return CHARTS / f"{name}.csv"


def _json_safe(value: Any) -> Any:
    # JSON has no NaN or infinity; DVC would refuse the file, so they become null.
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(item) for item in value]
    return value


def metrics_text(payload: dict[str, Any]) -> str:
    """The text :func:`write_metrics` writes: two-space indent, key order kept, final newline.

    Non-finite floats become ``null`` (JSON has none; DVC would refuse the file).
    """
    return json.dumps(_json_safe(payload), indent=2) + "\n"


def write_metrics(path: Path, payload: dict[str, Any]) -> None:
    """Write a JSON record (a DVC metrics file, a model's ``config.json``) all-or-nothing.

    The folder is created if needed; the format is :func:`metrics_text`.

    Raises:
        WriteError: the file cannot be written (its message names the path).
    """
    write_atomically(Path(path), metrics_text(payload).encode("utf-8"))


def read_metrics(path: Path) -> dict[str, Any]:
    """Read a JSON record written by :func:`write_metrics`.

    Raises:
        AttnlabError: the file is missing, cannot be read, is not JSON or not a JSON
            object; the message names the file.
    """
    try:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise AttnlabError(f"{path}: missing") from None
    except (OSError, ValueError) as err:
        raise AttnlabError(f"{path}: unreadable ({err})") from None
    if not isinstance(record, dict):
        raise AttnlabError(f"{path}: unreadable (expected a JSON object)")
    return record
