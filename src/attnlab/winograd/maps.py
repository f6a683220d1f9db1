"""Where the Winograd model looks when it answers (E17 of docs/catalogue.md).

For probe sentences that differ only in the adjective, the attention weights of the query
position (the ``the`` right before the answer) in every block, averaged over heads, read
through :meth:`~attnlab.models.LanguageModel.attention_maps`. The story's claim to check:
block 1's row is the same for every adjective (the query ``the`` cannot know the adjective
yet, so it carries the first noun forward), while block 2 reads the adjective and, for a
crossed-thing adjective, fetches the other noun.
"""

from dataclasses import dataclass

import torch

from attnlab.catalogue.winograd import QUERY_POSITION
from attnlab.models import LanguageModel
from attnlab.winograd.sentences import Adjectives, Sentence, Split, encode


@dataclass(frozen=True)
class QueryRow:
    """One probe sentence: where each block's query looks, and what the model answers."""

    sentence: Sentence
    words: tuple[str, ...]  # the prefix the model reads, up to and including the query
    weights: list[list[float]]  # per block: the head-averaged weights over ``words``
    answer: str  # the argmax at the query position
    p_referent: float  # the probability given to the right answer


def probe_sentences(x: str, y: str, adjectives: Adjectives, split: Split) -> list[Sentence]:
    """The probe ``the {x} did not cross the {y} because it was too {adj}`` per adjective.

    ``split`` records where the pair ``(x, y)`` is in the task (the maps say so).
    """
    return [Sentence(x, y, adj, role, split) for adj, role in adjectives.by_role()]


@torch.no_grad()
def query_rows(
    model: LanguageModel, sentences: list[Sentence], vocabulary: tuple[str, ...]
) -> list[QueryRow]:
    """Read each block's head-averaged attention at the query position of each sentence.

    Raises:
        ValueError: the model has no attention to read (a bigram model).
    """
    model.eval()
    prefixes = [s.words[: QUERY_POSITION + 1] for s in sentences]
    idx = torch.tensor([encode(p, vocabulary) for p in prefixes])  # (A, Q+1)
    records = model.attention_maps(idx)
    if not records:
        raise ValueError("the model has no mixer: there is no attention to read")
    rows = torch.stack(
        [r.weights[:, :, QUERY_POSITION, :].mean(dim=1) for r in records], dim=1
    )  # (A, n_blocks, Q+1): heads averaged
    probs = model(idx)[:, QUERY_POSITION].softmax(dim=-1)  # (A, V)
    referents = torch.tensor(encode([s.referent for s in sentences], vocabulary))  # (A,)
    p_referent = probs.gather(1, referents[:, None])[:, 0]  # (A,)
    return [
        QueryRow(
            sentence=s,
            words=prefix,
            weights=[[round(w, 5) for w in block.tolist()] for block in rows[i]],
            answer=vocabulary[int(probs[i].argmax())],
            p_referent=round(float(p_referent[i]), 5),
        )
        for i, (s, prefix) in enumerate(zip(sentences, prefixes, strict=True))
    ]


def _as_record(row: QueryRow) -> dict:
    return {
        "role": row.sentence.role,
        "referent": row.sentence.referent,
        "answer": row.answer,
        "p_referent": row.p_referent,
        "tokens": list(row.words),
        "blocks": row.weights,
    }


def maps_record(variant: str, rows: list[QueryRow]) -> dict:
    """The maps as one JSON-ready record, keyed by adjective (the figures draw from it).

    ``adjectives[adj]["blocks"][b][p]`` is block ``b + 1``'s head-averaged weight from the
    query to position ``p`` of ``adjectives[adj]["tokens"]``.
    """
    first = rows[0].sentence
    return {
        "variant": variant,
        "x": first.x,
        "y": first.y,
        "pair_split": first.split,
        "query_position": QUERY_POSITION,
        "adjectives": {row.sentence.adjective: _as_record(row) for row in rows},
    }


def maps_table(rows: list[QueryRow]) -> list[dict]:
    """The maps in long form, one line per (adjective, block, key position), for a TSV."""
    return [
        {
            "adjective": row.sentence.adjective,
            "role": row.sentence.role,
            "block": block + 1,
            "position": position,
            "word": row.words[position],
            "weight": weight,
        }
        for row in rows
        for block, weights in enumerate(row.weights)
        for position, weight in enumerate(weights)
    ]
