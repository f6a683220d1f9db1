"""The Winograd sentences on disk (E16, E17 of docs/catalogue.md): one Parquet file per task.

A row per sentence with its words spelled out (``x``, ``y``, ``adjective``, ``role``,
``referent``, ``split``) for reading, and its 18 token ids as a fixed-size list for
training; the schema metadata carries the vocabulary, so a file is self-describing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from attnlab.catalogue.winograd import SENTENCE_LENGTH
from attnlab.winograd.sentences import Split, WinogradTask, encode

if TYPE_CHECKING:
    from torch import Tensor

TOKENS = "tokens"
_WORD_COLUMNS = ("split", "x", "y", "adjective", "role", "referent")


def write_task(task: WinogradTask, path: Path) -> None:
    """Write every sentence of ``task`` to one Parquet file (deterministic bytes)."""
    ids = np.array(
        [encode(s.words, task.vocabulary) for s in task.sentences], dtype=np.uint16
    )  # (N, L)
    columns = {
        "split": [s.split for s in task.sentences],
        "x": [s.x for s in task.sentences],
        "y": [s.y for s in task.sentences],
        "adjective": [s.adjective for s in task.sentences],
        "role": [s.role for s in task.sentences],
        "referent": [s.referent for s in task.sentences],
    }
    arrays = [pa.array(columns[name], type=pa.string()) for name in _WORD_COLUMNS]
    flat = pa.array(ids.reshape(-1), type=pa.uint16())
    arrays.append(pa.FixedSizeListArray.from_arrays(flat, SENTENCE_LENGTH))
    schema = pa.schema(
        [pa.field(name, pa.string(), nullable=False) for name in _WORD_COLUMNS]
        + [pa.field(TOKENS, pa.list_(pa.uint16(), SENTENCE_LENGTH), nullable=False)],
        metadata={
            "attnlab.task": task.name,
            "attnlab.vocabulary": json.dumps(list(task.vocabulary)),
        },
    )
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_arrays(arrays, schema=schema), path, compression="zstd")


def read_vocabulary(path: Path) -> tuple[str, ...]:
    """The vocabulary a task file was encoded with; a token's id is its index."""
    metadata = pq.read_schema(path).metadata or {}
    return tuple(json.loads(metadata[b"attnlab.vocabulary"]))


def read_sentences(path: Path, split: Split | None = None) -> Tensor:
    """The token ids of one split's sentences (all when ``split`` is None), (N, 18) int64."""
    table = pq.read_table(path, columns=["split", TOKENS])
    if split is not None:
        table = table.filter(pc.equal(table["split"], split))
    column = table[TOKENS].combine_chunks()
    flat = column.flatten().to_numpy(zero_copy_only=False)  # (N * L,) uint16
    import torch  # here: the winograd-data stage writes these files and never needs torch

    return torch.from_numpy(flat.astype(np.int64)).view(len(table), SENTENCE_LENGTH)  # (N, L)


def read_words(path: Path, split: Split | None = None) -> list[dict[str, str]]:
    """The sentences of one split as rows of words (``x``, ``y``, ``adjective``, ...)."""
    table = pq.read_table(path, columns=list(_WORD_COLUMNS))
    rows = table.to_pylist()
    return [row for row in rows if split is None or row["split"] == split]


def pair_split(path: Path, x: str, y: str) -> Split:
    """The split the ordered pair ``(x, y)`` belongs to in a task file.

    Raises:
        ValueError: no sentence of the file has ``x`` first and ``y`` second.
    """
    for row in read_words(path):
        if (row["x"], row["y"]) == (x, y):
            return row["split"]  # type: ignore[return-value]
    raise ValueError(f"{path}: no sentence has the pair ({x}, {y})")
