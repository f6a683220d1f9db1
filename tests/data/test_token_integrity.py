"""A token file is read only if its tokens are the ones the tokenize stage wrote.

Before, one flipped bit of ``train.parquet`` decoded to other valid tokens most of the
time, and training ran on them with exit 0; a file that did not decode was a traceback.
"""

import numpy as np
import pyarrow.parquet as pq
import pytest

from attnlab.data.tokens import read_tokens, split_stream, write_split
from attnlab.errors import AttnlabError


@pytest.fixture
def token_file(tmp_path):
    tokens = np.random.default_rng(0).integers(0, 1024, size=20_000, dtype=np.uint16)
    train, _ = split_stream(tokens, 0.1)
    path = tmp_path / "train.parquet"
    write_split(train, path, tokenizer_sha256="ab" * 32)
    return path, train.tokens


def _silent_flip(path, tokens) -> bytes:
    """The file with one bit flipped where Parquet still decodes it, to other tokens."""
    data = path.read_bytes()
    flipped = path.with_name("flipped.parquet")
    for offset in range(len(data) // 4, len(data) // 2):
        corrupt = bytearray(data)
        corrupt[offset] ^= 0x10
        flipped.write_bytes(bytes(corrupt))
        try:
            decoded = pq.read_table(flipped).column("token").to_numpy()
        except Exception:  # this flip does not decode; try the next
            continue
        if len(decoded) == len(tokens) and not np.array_equal(decoded, tokens):
            return bytes(corrupt)
    raise AssertionError("no bit flip decodes silently")


def test_a_flipped_bit_that_still_decodes_is_refused_naming_the_file(token_file):
    path, tokens = token_file
    path.write_bytes(_silent_flip(path, tokens))
    with pytest.raises(AttnlabError, match=f"{path}: its tokens do not match the SHA-256"):
        read_tokens(path)


def test_a_file_that_is_not_parquet_is_named(token_file):
    path, _ = token_file
    path.write_bytes(b"garbage" * 100)
    with pytest.raises(AttnlabError, match=f"{path}: not a readable token file"):
        read_tokens(path)
