"""Stage ``download``: fetch the corpus and land it only if its SHA-256 matches."""

import os

from attnlab import paths
from attnlab.config import load_params
from attnlab.data.download import MIRROR_ENV, fetch_corpus
from attnlab.stages.command import DEFAULT_PARAMS, ParamsFile, run_stage


def main(
    params: ParamsFile = DEFAULT_PARAMS,
) -> None:
    """Download the corpus from download.url and verify it against download.sha256.

    Reads: params download.* and the environment variable ATTNLAB_CORPUS_MIRROR (a path or
    file:// URL that replaces the network; the checksum still applies).
    Writes: data/raw/input.txt, atomically, and only when the checksum matches.
    """
    cfg = load_params(params).download
    mirror = os.environ.get(MIRROR_ENV) or None
    dest = fetch_corpus(
        cfg.url,
        cfg.sha256,
        paths.RAW_CORPUS,
        mirror=mirror,
        retries=cfg.retries,
        timeout_s=cfg.timeout_s,
    )
    print(
        f"{dest}: {dest.stat().st_size:,} bytes, SHA-256 {cfg.sha256} verified "
        f"({'mirror ' + mirror if mirror else cfg.url})"
    )


if __name__ == "__main__":
    run_stage(main)
