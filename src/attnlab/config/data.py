"""Params of the data half of the pipeline: download, bpe and tokenize (P0 of docs/catalogue.md)."""

import re
from typing import Annotated

from pydantic import Field, field_validator

from attnlab.config.base import Section

_SHA256 = re.compile(r"[0-9a-f]{64}")


class DownloadParams(Section):
    """Where the corpus comes from and what its bytes must hash to."""

    url: str
    sha256: str
    retries: Annotated[int, Field(ge=1, le=20)]
    timeout_s: Annotated[float, Field(gt=0)]

    @field_validator("url")
    @classmethod
    def _known_scheme(cls, url: str) -> str:
        if not url.startswith(("https://", "http://", "file://")):
            raise ValueError(f"expected an http(s):// or file:// URL, got {url!r}")
        return url

    @field_validator("sha256")
    @classmethod
    def _hex_digest(cls, digest: str) -> str:
        if not _SHA256.fullmatch(digest):
            raise ValueError("expected 64 hex characters (lower case)")
        return digest


class BpeParams(Section):
    """The byte-level BPE tokenizer: 256 byte tokens plus ``vocab_size - 256`` merges."""

    vocab_size: Annotated[int, Field(gt=256, le=65536)]


class TokenizeParams(Section):
    """How the token stream is split: the first ``1 - val_fraction`` trains, the rest validates."""

    val_fraction: Annotated[float, Field(gt=0.0, lt=1.0)]
