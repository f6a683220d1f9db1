"""The Winograd task (E16 leaky, E17 closed): sentences, data, scoring and attention maps.

Its template and held-out designs are the catalogue's (:mod:`attnlab.catalogue.winograd`).
"""

from attnlab.winograd.sentences import (
    Adjectives,
    Sentence,
    WinogradTask,
    build_vocabulary,
    closed_task,
    decode,
    encode,
    leaky_task,
)

__all__ = [
    "Adjectives",
    "Sentence",
    "WinogradTask",
    "build_vocabulary",
    "closed_task",
    "decode",
    "encode",
    "leaky_task",
]
