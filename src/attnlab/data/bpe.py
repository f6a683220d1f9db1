"""Byte-level BPE (P0 of docs/catalogue.md): 256 byte tokens plus merges, no special tokens.

Built on HF ``tokenizers`` with GPT-2's pre-tokenization regex, so every byte string,
including bytes the training text never contained, encodes and decodes losslessly.
"""

import hashlib
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from attnlab.errors import AttnlabError

BYTE_TOKENS = 256


def train_bpe(text: str, vocab_size: int) -> Tokenizer:
    """Train a byte-level BPE of exactly ``vocab_size`` tokens on ``text``.

    The 256 byte tokens come first (the initial alphabet), then ``vocab_size - 256``
    merges learned from ``text``. Training is deterministic: the same text and size give
    byte-identical ``tokenizer.json`` files.

    Raises:
        ValueError: the text is too short to learn that many merges.
    """
    tokenizer = Tokenizer(models.BPE())
    # use_regex=True is GPT-2's pre-tokenization; no prefix space keeps decode(encode(s)) == s.
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=[],
        min_frequency=0,
        show_progress=False,
    )
    tokenizer.train_from_iterator([text], trainer=trainer)
    size = tokenizer.get_vocab_size()
    if size != vocab_size:
        raise ValueError(
            f"learned {size - BYTE_TOKENS} merges, not the {vocab_size - BYTE_TOKENS} asked for: "
            "the training text is too short for this vocab_size"
        )
    return tokenizer


def save_tokenizer(tokenizer: Tokenizer, path: Path) -> str:
    """Write ``tokenizer.json`` (compact, stable key order) and return its SHA-256."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = tokenizer.to_str(pretty=False).encode("utf-8")
    path.write_bytes(payload)
    return hashlib.sha256(payload).hexdigest()


def load_tokenizer(path: Path) -> Tokenizer:
    """Read a tokenizer written by :func:`save_tokenizer`.

    Raises:
        AttnlabError: the file is missing or is not a tokenizer (naming it).
    """
    try:
        return Tokenizer.from_file(str(path))
    except Exception as err:  # the tokenizers library raises plain Exception
        raise AttnlabError(
            f"{path}: not a readable tokenizer ({err}); rerun `dvc repro bpe`"
        ) from None
