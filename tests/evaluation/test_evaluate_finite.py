"""Evaluation measures only finite weights and writes only finite scores, never null.

Before, one weight of ``model.pt`` set to infinity (its manifest recomputed, so the hash
check passes) was evaluated with exit 0, and ``eval.json`` held ``"val/ppl": null``: read
by the report as a run never measured. Training refuses to save such weights; the
evaluation did not check its own inputs or results.
"""

import math
from pathlib import Path

import pytest
import torch

from attnlab.config import load_params
from attnlab.data.bpe import save_tokenizer, train_bpe
from attnlab.data.tokens import encode_corpus, split_stream, write_split
from attnlab.errors import AttnlabError
from attnlab.evaluation.saved_run import evaluate_trained
from attnlab.models import LanguageModel
from attnlab.runs.model_folder import save_trained_model
from attnlab.training import TrainJob

ROOT = Path(__file__).resolve().parents[2]
VARIANT, SEED = "ladder-no-context", 1337  # no attention: the cheapest model to measure


@pytest.fixture(scope="module")
def tokens(tmp_path_factory, corpus_mirror) -> Path:
    """A folder of the tokenizer and both splits of the first 120 kB of the corpus."""
    text = corpus_mirror.read_text(encoding="utf-8")[:120_000]
    tokenizer = train_bpe(text, 1024)
    folder = tmp_path_factory.mktemp("tokens")
    digest = save_tokenizer(tokenizer, folder / "tokenizer.json")
    for split in split_stream(encode_corpus(tokenizer, text), 0.1):
        write_split(split, folder / f"{split.name}.parquet", digest)
    return folder


def _evaluate(folder: Path, tokens: Path, edit) -> dict:
    """Save an untrained model after ``edit`` of its weights, manifest and all; measure it."""
    params = load_params(ROOT / "params.yaml")
    job = TrainJob.from_params(params, VARIANT, SEED)
    torch.manual_seed(0)
    model = LanguageModel(job.variant.model)
    with torch.no_grad():
        edit(model)
    save_trained_model(model, job.config(), folder)  # the hashes of the edited weights
    return evaluate_trained(
        folder, VARIANT, SEED, params.evaluate, params.seed, tokens, tokens / "tokenizer.json"
    )


def _first_weight(model: LanguageModel) -> tuple[str, torch.Tensor]:
    return next((n, p) for n, p in model.named_parameters() if p.dim() == 2)


def test_finite_weights_are_measured_to_finite_scores(tmp_path, tokens):
    record = _evaluate(tmp_path / "model", tokens, lambda model: None)
    assert all(math.isfinite(record[key]) for key in ("val/ppl", "val/bpb", "train/ppl"))


def test_a_weight_set_to_infinity_is_refused_naming_the_file(tmp_path, tokens):
    edited = []

    def infinite(model):
        name, weight = _first_weight(model)
        weight[0, 0] = math.inf
        edited.append(name)

    with pytest.raises(AttnlabError) as refused:
        _evaluate(tmp_path / "model", tokens, infinite)
    assert str(refused.value) == (
        f"{tmp_path / 'model' / 'model.pt'}: {edited[0]} holds a value that is not finite; "
        "retrain the run"
    )


def test_finite_weights_whose_score_overflows_are_refused_not_written_as_null(tmp_path, tokens):
    def huge(model):  # every logit of the order of 1e30: the loss overflows exp
        for parameter in model.parameters():
            parameter.mul_(1e15)

    with pytest.raises(AttnlabError) as refused:
        _evaluate(tmp_path / "model", tokens, huge)
    assert str(refused.value).startswith(f"{tmp_path / 'model'}: val/ppl")
    assert "not finite (inf); nothing written" in str(refused.value)
