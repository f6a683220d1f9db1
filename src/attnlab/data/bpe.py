"""Byte-level BPE (P0 of docs/catalogue.md): 256 byte tokens plus merges, no special tokens.

Built on HF ``tokenizers`` with GPT-2's pre-tokenization regex, so every byte string,
including bytes the training text never contained, encodes and decodes losslessly.
"""

from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from attnlab.errors import AttnlabError
from attnlab.runs.manifest import MANIFEST, listed_hashes, read_listed, sha256_of, write_listed

BYTE_TOKENS = 256
_REMEDY = "rerun `dvc repro bpe` or restore it with `dvc checkout`"


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
    """Write ``tokenizer.json`` (compact, stable key order) with its manifest; its SHA-256.

    The folder's ``manifest.json`` (:mod:`attnlab.runs.manifest`) lists the file's
    SHA-256, which :func:`load_tokenizer` checks: a flipped bit of a merge still parses,
    and tokenizes the corpus into other tokens.

    Raises:
        WriteError: the file cannot be written (naming it); nothing half-written is left.
    """
    path = Path(path)
    payload = tokenizer.to_str(pretty=False).encode("utf-8")
    write_listed(path.parent, {path.name: payload})
    return sha256_of(payload)


def load_tokenizer(path: Path) -> Tokenizer:
    """Read a tokenizer written by :func:`save_tokenizer`, and check it is a byte-level BPE.

    Its bytes are checked against its folder's manifest before they are parsed.

    Raises:
        AttnlabError: the file or its manifest is missing, its SHA-256 differs from the
            manifest's, it is not a tokenizer, or not a byte-level BPE (naming it).
    """
    path = Path(path)
    sha256 = listed_hashes(path.parent, _REMEDY).get(path.name)
    payload = read_listed(path, sha256, path.parent / MANIFEST, _REMEDY)
    try:
        tokenizer = Tokenizer.from_str(payload.decode("utf-8"))
    except Exception as err:  # the tokenizers library raises plain Exception
        raise AttnlabError(f"{path}: not a readable tokenizer ({err}); {_REMEDY}") from None
    problem = _byte_level_problem(tokenizer)
    if problem:
        raise AttnlabError(f"{path}: not a byte-level BPE ({problem}); {_REMEDY}")
    return tokenizer


def _byte_level_problem(tokenizer: Tokenizer) -> str | None:
    """What breaks the byte-level contract, or None.

    A flipped byte often still parses: a duplicated id leaves a hole that decodes to
    nothing (a null token), and a byte token turned into another character drops a byte
    from the alphabet. Every later reader counts a token's bytes as its characters
    (val/bpb), so each id must be a token and each token a string of byte characters.
    """
    vocab = tokenizer.get_vocab()
    if sorted(vocab.values()) != list(range(tokenizer.get_vocab_size())):
        return f"its {len(vocab)} tokens are not numbered 0 to {len(vocab) - 1}"
    alphabet = set(pre_tokenizers.ByteLevel.alphabet())
    missing = len(alphabet - vocab.keys())
    if missing:
        return f"{missing} of the {BYTE_TOKENS} byte tokens are missing"
    stray = next((token for token in vocab if not alphabet.issuperset(token)), None)
    if stray is not None:
        return f"token {vocab[stray]} ({stray!r}) is not a string of bytes"
    return None
