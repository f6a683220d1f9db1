"""Bits per byte (``val/bpb``): a model's score that does not depend on its vocabulary.

P0's perplexity is per token, and a token of a larger BPE vocabulary covers more text; the
mean NLL per byte of the scored text compares any two tokenizers. The evaluate stage and
:class:`~attnlab.metrics.WholeSplitScore` (the W&B summary) both count it this way.
"""

import math
from pathlib import Path

import torch
from torch import Tensor

from attnlab.data.bpe import load_tokenizer
from attnlab.data.tokens import check_made_with
from attnlab.metrics.perplexity import Perplexity
from attnlab.runs.manifest import sha256_of


def bits_per_byte(score: Perplexity, scored_bytes: int) -> float:
    """The mean NLL in bits per byte of text: ``nll * tokens / (ln 2 * bytes)``."""
    return score.nll * score.tokens / (math.log(2) * scored_bytes)


def token_byte_lengths(tokenizer_path: Path, tokens_path: Path) -> Tensor:
    """(V,) the bytes each token id stands for, from a byte-level BPE's ``tokenizer.json``.

    A byte-level token's string holds one character per byte (GPT-2's byte alphabet).
    The tokenizer must be the one that wrote ``tokens_path``, the token file it counts.

    Raises:
        AttnlabError: the tokenizer fails its manifest or is not a byte-level BPE.
        TokenFileError: it is not the tokenizer that wrote ``tokens_path``.
    """
    tokenizer = load_tokenizer(tokenizer_path)
    check_made_with(tokens_path, sha256_of(Path(tokenizer_path).read_bytes()), tokenizer_path)
    lengths = [len(tokenizer.id_to_token(i)) for i in range(tokenizer.get_vocab_size())]
    return torch.tensor(lengths, dtype=torch.int64)


def scored_bytes(tokens: Tensor, token_bytes: Tensor) -> int:
    """Bytes of the split's scored tokens: every token but the first (P0's protocol)."""
    return int(token_bytes[tokens[1:].long()].sum())
