"""The Winograd task (E16 leaky, E17 closed): sentences, data, scoring and attention maps."""

from attnlab.winograd.sentences import (
    ANSWER_POSITION,
    QUERY_POSITION,
    SENTENCE_LENGTH,
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
    "ANSWER_POSITION",
    "QUERY_POSITION",
    "SENTENCE_LENGTH",
    "Adjectives",
    "Sentence",
    "WinogradTask",
    "build_vocabulary",
    "closed_task",
    "decode",
    "encode",
    "leaky_task",
]
