"""The token stream as Parquet (P0 of docs/catalogue.md): encode, split 90/10, store, read back.

Each split is one ``uint16`` column named ``token``; the schema metadata names the split,
the SHA-256 of the tokenizer that produced it, and the SHA-256 of the tokens themselves.
Reading back goes from Arrow's buffer to a torch tensor without a further copy, and checks
that hash first: one flipped bit of a Parquet file often still decodes, to other valid
tokens, and training on them would be recorded as a result of the real corpus.
"""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from tokenizers import Tokenizer

from attnlab.errors import AttnlabError
from attnlab.files import write_atomically

if TYPE_CHECKING:
    import torch

TOKEN_COLUMN = "token"
TOKENS_SHA256 = "attnlab.tokens_sha256"
TOKENIZER_SHA256 = "attnlab.tokenizer_sha256"  # of the tokenizer that wrote the tokens
# 64 Ki tokens (128 KiB) per row group: a few groups for tiny Shakespeare, and row groups
# small enough that a reader of a larger corpus can stream them.
ROW_GROUP_TOKENS = 1 << 16
_MAX_UINT16_VOCAB = 1 << 16


class TokenFileError(AttnlabError):
    """A token file cannot be read, or its tokens are not the ones the tokenizer wrote."""


@dataclass(frozen=True)
class TokenSplit:
    """A contiguous run of the token stream and what it is called."""

    name: str
    tokens: np.ndarray  # (N,) uint16


def encode_corpus(tokenizer: Tokenizer, text: str) -> np.ndarray:
    """Encode ``text`` into one ``uint16`` token stream.

    Raises:
        ValueError: the tokenizer has more ids than 16 bits can hold.
    """
    if tokenizer.get_vocab_size() > _MAX_UINT16_VOCAB:
        raise ValueError(f"vocab of {tokenizer.get_vocab_size()} does not fit in uint16 tokens")
    return np.asarray(tokenizer.encode(text).ids, dtype=np.uint16)


def split_stream(tokens: np.ndarray, val_fraction: float) -> tuple[TokenSplit, TokenSplit]:
    """Cut the stream in two: the first ``1 - val_fraction`` trains, the rest validates.

    Splitting tokens rather than characters is the catalogue's choice (P0); the train
    size is rounded down, so every token lands in exactly one split.
    """
    n_train = int(len(tokens) * (1.0 - val_fraction))
    if n_train == 0 or n_train == len(tokens):
        raise ValueError(
            f"val_fraction={val_fraction} leaves a split of {len(tokens)} tokens empty"
        )
    return TokenSplit("train", tokens[:n_train]), TokenSplit("val", tokens[n_train:])


def write_split(split: TokenSplit, path: Path, tokenizer_sha256: str) -> None:
    """Write one split as a single-column Parquet file with descriptive schema metadata.

    The file is built in memory and then written all-or-nothing, so a failed write (a
    full disk) names the file and leaves no half-written Parquet behind.

    Raises:
        WriteError: the file cannot be written (naming it).
    """
    schema = pa.schema(
        [pa.field(TOKEN_COLUMN, pa.uint16(), nullable=False)],
        metadata={
            "attnlab.split": split.name,
            TOKENIZER_SHA256: tokenizer_sha256,
            "attnlab.tokens": str(len(split.tokens)),
            TOKENS_SHA256: _tokens_sha256(split.tokens),
        },
    )
    table = pa.Table.from_arrays([pa.array(split.tokens, type=pa.uint16())], schema=schema)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, row_group_size=ROW_GROUP_TOKENS, compression="zstd")
    write_atomically(Path(path), sink.getvalue().to_pybytes())


def _tokens_sha256(tokens: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(tokens, dtype="<u2").data).hexdigest()


def read_metadata(path: Path) -> dict[str, str]:
    """The ``attnlab.*`` schema metadata of a token file, without reading its data.

    Raises:
        TokenFileError: the file is missing or is not Parquet.
    """
    try:
        raw = pq.read_schema(path).metadata or {}
    except (OSError, pa.ArrowException) as err:
        raise TokenFileError(f"{path}: not a readable token file ({err})") from None
    return {k.decode(): v.decode() for k, v in raw.items() if k.startswith(b"attnlab.")}


def check_made_with(path: Path, tokenizer_sha256: str, tokenizer: Path) -> None:
    """Refuse a tokenizer other than the one that wrote the token file ``path``.

    Every reader of ``val/bpb`` counts a token's bytes with the tokenizer: another one (a
    retrained or smaller vocabulary copied over it, whole with its manifest) would count
    other bytes, or none past its last id.

    Raises:
        TokenFileError: ``path`` records another tokenizer's SHA-256 than
            ``tokenizer_sha256``, ``tokenizer``'s (naming both files), or none.
    """
    recorded = read_metadata(path).get(TOKENIZER_SHA256)
    if recorded != tokenizer_sha256:
        raise TokenFileError(
            f"{tokenizer}: not the tokenizer that wrote {path} (SHA-256 {tokenizer_sha256}, "
            f"the tokens record {recorded}); rerun `dvc repro tokenize`, or restore both "
            "with `dvc checkout`"
        )


def read_tokens(path: Path) -> torch.Tensor:
    """Load a token file as a 1-D ``torch.uint16`` tensor that shares Arrow's memory.

    Parquet decoding fills one Arrow buffer per row group; joining them is the single copy.
    From there NumPy and torch only take views. The tensor is read-only in spirit: training
    gathers windows from it and never writes into it.

    Raises:
        TokenFileError: the file is unreadable, records no token hash, or its tokens do not
            match the hash the tokenize stage recorded.
    """
    expected = read_metadata(path).get(TOKENS_SHA256)
    if expected is None:
        raise TokenFileError(
            f"{path}: records no token hash ({TOKENS_SHA256}); rerun `dvc repro tokenize`"
        )
    try:
        column = pq.read_table(path, columns=[TOKEN_COLUMN]).column(TOKEN_COLUMN)
    except (OSError, pa.ArrowException, KeyError) as err:
        raise TokenFileError(f"{path}: not a readable token file ({err})") from None
    array = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    view = array.to_numpy(zero_copy_only=True)  # (N,) uint16, a view of the Arrow buffer
    if _tokens_sha256(view) != expected:
        raise TokenFileError(
            f"{path}: its tokens do not match the SHA-256 the tokenize stage recorded (the "
            "file is corrupt); restore it with `dvc checkout` or rerun `dvc repro tokenize`"
        )
    import torch  # here: the tokenize stage writes token files and never needs torch

    with warnings.catch_warnings():
        # torch warns that the buffer is not writable; nothing ever writes into it.
        warnings.simplefilter("ignore", UserWarning)
        return torch.from_numpy(view)


def check_fits(tokens: torch.Tensor, path: Path, block_size: int, vocab_size: int) -> None:
    """Refuse a split a model of this context and vocabulary cannot train or be scored on.

    Raises:
        TokenFileError: the split holds no window of ``block_size + 1`` tokens, or an id
            outside the vocabulary (the token files come from another ``bpe.vocab_size``).
    """
    if len(tokens) < block_size + 1:
        raise TokenFileError(
            f"{path}: {len(tokens)} tokens hold no window of block_size + 1 = "
            f"{block_size + 1}; shorten model.block_size or the variant's"
        )
    largest = int(tokens.numpy().max())  # torch has no max for uint16
    if largest >= vocab_size:
        raise TokenFileError(
            f"{path}: holds token id {largest}, outside the vocabulary of {vocab_size} "
            "(bpe.vocab_size); rerun `dvc repro tokenize` so the tokens match it"
        )
