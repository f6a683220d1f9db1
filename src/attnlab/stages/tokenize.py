"""Stage ``tokenize``: encode the corpus, split it 90/10, store both splits as Parquet."""

import json

from attnlab.config import load_params
from attnlab.data.bpe import load_tokenizer
from attnlab.data.download import sha256_of
from attnlab.data.tokens import encode_corpus, split_stream, write_split
from attnlab.paths import CORPUS_METRICS, RAW_CORPUS, TOKENIZER, TOKENS, write_metrics
from attnlab.stages.command import DEFAULT_PARAMS, ParamsFile, run_stage


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
        write_split(split, TOKENS / f"{split.name}.parquet", sha256_of(TOKENIZER))
    train, val = splits
    metrics = {
        "chars": len(text),
        "tokens": len(tokens),
        "chars_per_token": round(len(text) / len(tokens), 4),
        "train_tokens": len(train.tokens),
        "val_tokens": len(val.tokens),
        "vocab_size": tokenizer.get_vocab_size(),
    }
    write_metrics(CORPUS_METRICS, metrics)
    print(json.dumps(metrics))


if __name__ == "__main__":
    run_stage(main)
