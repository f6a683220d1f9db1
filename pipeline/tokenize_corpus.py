"""Stage ``tokenize``: encode the corpus, split it 90/10, store both splits as Parquet.

(Named tokenize_corpus.py because a script called tokenize.py would shadow Python's own
``tokenize`` module for everything the stage imports.)
"""

import json
from pathlib import Path

from attnlab.cli import DEFAULT_PARAMS, ParamsFile, run_stage
from attnlab.config import load_params
from attnlab.data.bpe import load_tokenizer
from attnlab.data.download import sha256_of
from attnlab.data.tokens import encode_corpus, split_stream, write_split

RAW_CORPUS = Path("data/raw/input.txt")
TOKENIZER = Path("data/tokenizer/tokenizer.json")
TOKENS_DIR = Path("data/tokens")
METRICS = Path("reports/metrics/corpus.json")


def main(
    params: ParamsFile = DEFAULT_PARAMS,
) -> None:
    """Encode the corpus and write the train and validation token files.

    Reads: params tokenize.val_fraction; data/raw/input.txt; data/tokenizer/tokenizer.json.
    Writes: data/tokens/train.parquet and data/tokens/val.parquet (one uint16 column),
    and reports/metrics/corpus.json (chars, tokens, chars_per_token, split sizes, vocab).
    """
    cfg = load_params(params).tokenize
    text = RAW_CORPUS.read_text(encoding="utf-8")
    tokenizer = load_tokenizer(TOKENIZER)
    tokens = encode_corpus(tokenizer, text)
    splits = split_stream(tokens, cfg.val_fraction)
    for split in splits:
        write_split(split, TOKENS_DIR / f"{split.name}.parquet", sha256_of(TOKENIZER))
    train, val = splits
    metrics = {
        "chars": len(text),
        "tokens": len(tokens),
        "chars_per_token": round(len(text) / len(tokens), 4),
        "train_tokens": len(train.tokens),
        "val_tokens": len(val.tokens),
        "vocab_size": tokenizer.get_vocab_size(),
    }
    METRICS.parent.mkdir(parents=True, exist_ok=True)
    METRICS.write_text(json.dumps(metrics, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(metrics))


if __name__ == "__main__":
    run_stage(main)
