"""Stage ``bpe``: train the byte-level BPE tokenizer on the corpus."""

from attnlab import paths
from attnlab.config import load_params
from attnlab.data.bpe import save_tokenizer, train_bpe
from attnlab.data.download import read_corpus
from attnlab.stages.command import DEFAULT_PARAMS, ParamsFile, run_stage


def main(
    params: ParamsFile = DEFAULT_PARAMS,
) -> None:
    """Train a byte-level BPE of bpe.vocab_size tokens (256 bytes + merges) on the corpus.

    Reads: params bpe.vocab_size, download.sha256 (checked against the corpus before any
    work); data/raw/input.txt.
    Writes: data/tokenizer/tokenizer.json (deterministic: same input, same bytes).
    """
    loaded = load_params(params)
    cfg = loaded.bpe
    text = read_corpus(paths.RAW_CORPUS, loaded.download.sha256)
    digest = save_tokenizer(train_bpe(text, cfg.vocab_size), paths.TOKENIZER)
    print(f"{paths.TOKENIZER}: {cfg.vocab_size} tokens, SHA-256 {digest}")


if __name__ == "__main__":
    run_stage(main)
