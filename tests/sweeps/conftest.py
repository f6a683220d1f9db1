"""Fixtures for the sweep tests: real tokens, a real PostgreSQL server, quiet W&B, one thread."""

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from postgres import create_database, postgres_server
from sweep_helpers import SweepProject

from attnlab.data.bpe import save_tokenizer, train_bpe
from attnlab.data.tokens import encode_corpus, split_stream, write_split

_databases = itertools.count()


@pytest.fixture(scope="session")
def sweep_tokens(tmp_path_factory, corpus_mirror) -> Path:
    """data/tokens of the first 150 kB of tiny Shakespeare (BPE vocab 1024, split 90/10)."""
    text = corpus_mirror.read_text(encoding="utf-8")[:150_000]
    tokenizer = train_bpe(text, 1024)
    tokens = encode_corpus(tokenizer, text)
    folder = tmp_path_factory.mktemp("tokens")
    digest = save_tokenizer(tokenizer, folder / "tokenizer.json")  # the stages' val/bpb reads it
    for split in split_stream(tokens, 0.1):
        write_split(split, folder / f"{split.name}.parquet", digest)
    return folder


@pytest.fixture(scope="session")
def postgres() -> Iterator[str]:
    """A PostgreSQL server on loopback for the whole session; fails (never skips) if absent."""
    with postgres_server() as url:
        yield url


@pytest.fixture
def pg_database(postgres) -> str:
    """A fresh, empty database on the session's server."""
    return create_database(postgres, f"sweeps_{next(_databases)}")


@pytest.fixture(autouse=True)
def _quiet_wandb(monkeypatch, tmp_path):
    """No test talks to W&B servers; a test that wants offline runs sets WANDB_MODE."""
    monkeypatch.setenv("WANDB_MODE", "disabled")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path / "wandb"))
    monkeypatch.setenv("ATTNLAB_RUN_ROOT", str(tmp_path / "runs"))
    monkeypatch.delenv("ATTNLAB_OPTUNA_STORAGE", raising=False)
    monkeypatch.delenv("DVC_EXP_NAME", raising=False)


@pytest.fixture(autouse=True)
def _one_thread(one_torch_thread):
    """Every test here trains tiny models: see ``one_torch_thread``."""


@pytest.fixture
def sweep_project(tmp_path, sweep_tokens) -> Callable[..., SweepProject]:
    """Make a project folder ``name`` under tmp_path, with these params, to run attnlab in."""

    def make(name: str, params: dict, **env: str) -> SweepProject:
        return SweepProject(tmp_path / name, sweep_tokens, params, env)

    return make
