"""Byte-level BPE and the token Parquet files (stages bpe and tokenize)."""

import hashlib
import json
import random

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

from attnlab.data.bpe import BYTE_TOKENS, load_tokenizer, save_tokenizer, train_bpe
from attnlab.data.tokens import (
    TokenSplit,
    encode_corpus,
    read_metadata,
    read_tokens,
    split_stream,
    write_split,
)
from attnlab.errors import AttnlabError
from attnlab.metrics.bpb import scored_bytes, token_byte_lengths
from attnlab.runs.manifest import sha256_of, write_listed

# A tiny in-file corpus keeps these tests hermetic and fast (nanochat's habit).
TINY = (
    "ROMEO:\nBut, soft! what light through yonder window breaks?\n"
    "It is the east, and Juliet is the sun.\n"
    "JULIET:\nO Romeo, Romeo! wherefore art thou Romeo?\n"
) * 40


@pytest.fixture(scope="module")
def tokenizer():
    return train_bpe(TINY, vocab_size=300)


def test_the_vocab_is_256_bytes_plus_exactly_the_merges_asked_for(tokenizer):
    assert tokenizer.get_vocab_size() == 300
    assert tokenizer.get_vocab_size() - BYTE_TOKENS == 44


def test_too_many_merges_for_the_text_is_an_error():
    with pytest.raises(ValueError, match="too short for this vocab_size"):
        train_bpe("ab ab ab", vocab_size=1024)


@pytest.mark.parametrize(
    "text",
    [
        "wherefore art thou Romeo?",
        "naïve café — “quoted” ☃ 日本語 🙂",
        "\x00\x01\x7f bytes\tnever\r\nseen",
        "  leading and trailing spaces  ",
        "",
    ],
)
def test_encode_decode_round_trips_any_text(tokenizer, text):
    ids = tokenizer.encode(text).ids
    assert all(0 <= i < 300 for i in ids)
    assert tokenizer.decode(ids) == text


def test_training_is_deterministic_byte_for_byte(tmp_path):
    a, b = tmp_path / "a" / "tokenizer.json", tmp_path / "b" / "tokenizer.json"
    first = save_tokenizer(train_bpe(TINY, 300), a)
    second = save_tokenizer(train_bpe(TINY, 300), b)
    assert first == second
    assert a.read_bytes() == b.read_bytes()
    assert load_tokenizer(a).encode(TINY).ids == train_bpe(TINY, 300).encode(TINY).ids


def _listed_with_tokens(folder, payload: bytes):
    """``folder/tokenizer.json`` holding ``payload``, listed in its manifest, and token
    files written by it: what a tokenizer that passes every hash check leaves."""
    write_listed(folder, {"tokenizer.json": payload})
    tokens = folder / "val.parquet"
    write_split(TokenSplit("val", np.arange(10, dtype=np.uint16)), tokens, sha256_of(payload))
    return folder / "tokenizer.json", tokens


def test_no_flipped_bit_of_tokenizer_json_ends_in_a_traceback(tokenizer, tmp_path):
    # Before, 22 of 400 flips of the real tokenizer still parsed with a hole in its ids,
    # and the bits-per-byte count ended in a TypeError on the null token. Each flip here
    # is listed in the manifest, as if written so: the checks behind the hash.
    good = tokenizer.to_str(pretty=False).encode("utf-8")
    path = tmp_path / "tokenizer.json"
    rng = random.Random(0)
    refused = 0
    for _ in range(400):
        corrupt = bytearray(good)
        corrupt[rng.randrange(len(good))] ^= 1 << rng.randrange(8)
        path, tokens = _listed_with_tokens(tmp_path, bytes(corrupt))
        try:
            lengths = token_byte_lengths(path, tokens)  # any other exception fails the test
        except AttnlabError as err:
            assert str(err).startswith(f"{path}: not a ")
            refused += 1
            continue
        assert len(lengths) == 300 and int(lengths.min()) >= 1
    assert refused > 300


def test_a_token_id_listed_twice_is_refused_naming_the_file(tokenizer, tmp_path):
    duplicated = tokenizer.to_str().replace('"!":0,', '"!":1,', 1).encode("utf-8")
    path, _ = _listed_with_tokens(tmp_path, duplicated)
    with pytest.raises(AttnlabError, match=f"{path}: not a byte-level BPE .*not numbered"):
        load_tokenizer(path)


def test_an_edited_merge_that_still_loads_is_refused_by_the_manifest(tokenizer, tmp_path):
    # The case: one flipped bit of a merge (["Ġs","e"] -> ["Ġs","a"]) still
    # loaded, and `attnlab tokenize` wrote 460,425 tokens (not 459,792) with exit 0. Here
    # the first merge is gone: a tokenizer still, encoding otherwise.
    from tokenizers import Tokenizer

    path = tmp_path / "tokenizer.json"
    save_tokenizer(tokenizer, path)
    edited = json.loads(path.read_text(encoding="utf-8"))
    edited["model"]["merges"].pop(0)
    path.write_text(json.dumps(edited, separators=(",", ":")), encoding="utf-8")
    silent = Tokenizer.from_file(str(path))
    assert silent.encode(TINY).ids != tokenizer.encode(TINY).ids
    with pytest.raises(AttnlabError) as refused:
        load_tokenizer(path)
    manifest = tmp_path / "manifest.json"
    assert str(refused.value).startswith(f"{path}: its SHA-256 differs from the one in {manifest}")


def test_another_whole_tokenizer_is_refused_for_the_tokens_of_this_one(tokenizer, tmp_path):
    # The cases: a valid tokenizer of other merges copied over the real one (its
    # val/bpb read 4.0397, not 3.9783, with exit 0), and one of a smaller vocabulary (a raw
    # IndexError counting the bytes of token ids past its last).
    tokens = tmp_path / "val.parquet"
    ids = np.arange(280, 300, dtype=np.uint16)  # ids only the 300-token vocabulary holds
    write_split(TokenSplit("val", ids), tokens, save_tokenizer(tokenizer, tmp_path / "a.json"))
    assert scored_bytes(read_tokens(tokens), token_byte_lengths(tmp_path / "a.json", tokens)) > 0
    for size in (300, 270):  # other merges of the same size, and a smaller vocabulary
        other = tmp_path / f"other-{size}" / "tokenizer.json"
        digest = save_tokenizer(train_bpe(TINY.swapcase(), size), other)
        with pytest.raises(AttnlabError) as refused:
            token_byte_lengths(other, tokens)
        assert str(refused.value).startswith(
            f"{other}: not the tokenizer that wrote {tokens} (SHA-256 {digest}"
        )


def test_merges_compress_the_training_text(tokenizer):
    assert len(encode_corpus(tokenizer, TINY)) < len(TINY.encode()) / 2


def test_the_split_is_90_10_on_tokens_and_covers_every_token():
    tokens = np.arange(1000, dtype=np.uint16)
    train, val = split_stream(tokens, 0.1)
    assert (len(train.tokens), len(val.tokens)) == (900, 100)
    assert np.array_equal(np.concatenate([train.tokens, val.tokens]), tokens)
    with pytest.raises(ValueError, match="empty"):
        split_stream(tokens[:1], 0.1)


def test_parquet_round_trips_values_schema_and_metadata(tmp_path):
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, 1024, size=200_000, dtype=np.uint16)
    train, _ = split_stream(tokens, 0.1)
    path = tmp_path / "train.parquet"
    write_split(train, path, tokenizer_sha256="ab" * 32)

    schema = pq.read_schema(path)
    assert schema.names == ["token"] and str(schema.field("token").type) == "uint16"
    assert pq.read_metadata(path).num_row_groups == 3  # 180,000 tokens in 64 Ki groups
    assert read_metadata(path) == {
        "attnlab.split": "train",
        "attnlab.tokenizer_sha256": "ab" * 32,
        "attnlab.tokens": "180000",
        "attnlab.tokens_sha256": hashlib.sha256(train.tokens.astype("<u2").tobytes()).hexdigest(),
    }
    loaded = read_tokens(path)
    assert loaded.dtype == torch.uint16
    assert np.array_equal(loaded.numpy(), train.tokens)


@pytest.mark.parametrize("n_tokens", [5_000, 300_000])
def test_the_tensor_is_a_view_of_arrows_buffer(tmp_path, n_tokens):
    path = tmp_path / "val.parquet"
    write_split(split_stream(np.arange(n_tokens, dtype=np.uint16), 0.5)[1], path, "cd" * 32)
    before = pa.total_allocated_bytes()
    tensor = read_tokens(path)
    # The buffer stays allocated in Arrow's pool for as long as the tensor lives: torch
    # holds a view of it, not a copy (a copy would have let Arrow free it on return).
    assert pa.total_allocated_bytes() - before >= tensor.numel() * 2
    assert tensor.tolist() == pq.read_table(path).column("token").to_pylist()
