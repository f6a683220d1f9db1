"""Fixtures for the training tests: real tokens, a W&B kept off unless asked for."""

from collections.abc import Callable
from pathlib import Path

import pytest
from train_helpers import StageProject, train_here

from attnlab.data.bpe import save_tokenizer, train_bpe
from attnlab.data.tokens import encode_corpus, split_stream, write_split
from attnlab.training import TrainResult


@pytest.fixture(scope="session")
def train_tokens(tmp_path_factory, corpus_mirror) -> Path:
    """The first 200 kB of tiny Shakespeare as BPE tokens (vocab 1024), split 90/10.

    Returns the train split's Parquet file; ``val.parquet`` lies beside it.
    """
    text = corpus_mirror.read_text(encoding="utf-8")[:200_000]
    tokenizer = train_bpe(text, 1024)
    tokens = encode_corpus(tokenizer, text)
    folder = tmp_path_factory.mktemp("tokens")
    digest = save_tokenizer(tokenizer, folder / "tokenizer.json")  # the stages' val/bpb reads it
    for split in split_stream(tokens, 0.1):
        write_split(split, folder / f"{split.name}.parquet", digest)
    return folder / "train.parquet"


@pytest.fixture(autouse=True)
def _quiet_wandb(monkeypatch, tmp_path):
    """No test talks to W&B servers; a test that wants offline runs sets WANDB_MODE."""
    monkeypatch.setenv("WANDB_MODE", "disabled")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path / "wandb"))
    monkeypatch.delenv("DVC_EXP_NAME", raising=False)


@pytest.fixture(autouse=True)
def _one_thread(one_torch_thread):
    """Every test here trains tiny models: see ``one_torch_thread``."""


@pytest.fixture
def train_in_process(tmp_path, train_tokens) -> Callable[..., TrainResult]:
    """Train a variant of shrunk params in-process; run state under ``tmp_path``."""

    def train(params: dict, variant: str, **options) -> TrainResult:
        return train_here(params, variant, tmp_path, train_tokens, **options)

    return train


@pytest.fixture
def stage_project(tmp_path, train_tokens) -> Callable[[str, dict], StageProject]:
    """Make a project folder ``name`` under tmp_path, with these params, to run the stage in."""

    def make(name: str, params: dict) -> StageProject:
        return StageProject(tmp_path / name, train_tokens, params)

    return make
