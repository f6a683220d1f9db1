"""Stage ``tokenize``: encode the corpus, split it 90/10, store both splits as Parquet."""

import json

from attnlab import paths, result_code
from attnlab.config import load_params
from attnlab.data.bpe import load_tokenizer
from attnlab.data.download import read_corpus, sha256_of
from attnlab.data.tokens import encode_corpus, split_stream, write_split
from attnlab.stages.command import DEFAULT_PARAMS, ParamsFile, run_stage


def main(
    params: ParamsFile = DEFAULT_PARAMS,
) -> None:
    """Encode the corpus and write the train and validation token files.

    Reads: params tokenize.val_fraction, download.sha256 (checked against the corpus
    before any work); data/raw/input.txt; data/tokenizer/tokenizer.json.
    Writes: data/tokens/train.parquet and data/tokens/val.parquet (one uint16 column),
    and reports/metrics/corpus.json (chars, tokens, chars_per_token, split sizes, vocab).
    """
    loaded = load_params(params)
    cfg = loaded.tokenize
    text = read_corpus(paths.RAW_CORPUS, loaded.download.sha256)
    tokenizer = load_tokenizer(paths.TOKENIZER)
    tokens = encode_corpus(tokenizer, text)
    splits = split_stream(tokens, cfg.val_fraction)
    for split in splits:
        write_split(split, paths.TOKENS / f"{split.name}.parquet", sha256_of(paths.TOKENIZER))
    train, val = splits
    metrics = {
        "chars": len(text),
        "tokens": len(tokens),
        "chars_per_token": round(len(text) / len(tokens), 4),
        "train_tokens": len(train.tokens),
        "val_tokens": len(val.tokens),
        "vocab_size": tokenizer.get_vocab_size(),
    }
    paths.write_metrics(
        paths.CORPUS_METRICS, {**metrics, result_code.CODE: result_code.stamp("tokenize")}
    )
    print(json.dumps(metrics))


if __name__ == "__main__":
    run_stage(main)
