"""Scoring the Winograd task (E16, E17 of docs/catalogue.md): one question per sentence.

Only the position after ``so the`` is scored: the model reads the sentence up to the ``the``
before the answer and its argmax over the whole vocabulary is its answer. That answer is
either the referent (right), the other noun of the pair (the wrong noun: what a model that
ignores order answers on the closed task) or neither noun (any other word). The three
shares sum to one. Chance, for a model that knows the answer is one of the two nouns, is
one half.
"""

from dataclasses import dataclass

import torch
from torch import Tensor

from attnlab.catalogue.winograd import ANSWER_POSITION, QUERY_POSITION, X_POSITION, Y_POSITION
from attnlab.models import LanguageModel


@dataclass(frozen=True)
class Score:
    """How a model answered a set of sentences: the share of each kind of answer."""

    acc: float
    wrong_noun: float
    neither: float
    sentences: int


@torch.no_grad()
def answer_logits(model: LanguageModel, sentences: Tensor, batch_size: int = 1024) -> Tensor:
    """The logits at the query position, (N, V), for sentences' token ids (N, 18).

    The model sees the sentence only up to the query (the answer and what follows are cut
    off, although causal masking would hide them anyway). Runs in eval mode.
    """
    was_training = model.training
    model.eval()
    prefix = sentences[:, : QUERY_POSITION + 1]  # (N, Q+1)
    chunks = [model(chunk)[:, QUERY_POSITION] for chunk in prefix.split(batch_size)]  # (b, V)
    model.train(was_training)
    return torch.cat(chunks) if chunks else prefix.new_zeros(0, 0, dtype=torch.float)


def score_answers(answers: Tensor, sentences: Tensor) -> Score:
    """Score predicted token ids ``answers`` (N,) against sentences' token ids (N, 18).

    The referent is the sentence's token at the answer position; the wrong noun is
    whichever of ``x`` and ``y`` it is not.

    Raises:
        ValueError: no sentences, or the shapes do not match.
    """
    if len(sentences) == 0 or answers.shape != sentences.shape[:1]:
        raise ValueError(f"{tuple(answers.shape)} answers for {tuple(sentences.shape)} sentences")
    x, y = sentences[:, X_POSITION], sentences[:, Y_POSITION]  # (N,) each
    referent = sentences[:, ANSWER_POSITION]  # (N,)
    other = torch.where(referent == x, y, x)  # (N,)
    neither = (answers != referent) & (answers != other)  # (N,)
    return Score(
        acc=(answers == referent).float().mean().item(),
        wrong_noun=(answers == other).float().mean().item(),
        neither=neither.float().mean().item(),
        sentences=len(answers),
    )


def score_logits(logits: Tensor, sentences: Tensor) -> Score:
    """Score logits at the query position (N, V): the answer is the argmax over the vocabulary."""
    return score_answers(logits.argmax(dim=-1), sentences)


def score_model(model: LanguageModel, sentences: Tensor) -> Score:
    """Ask ``model`` every sentence's question and score its answers."""
    return score_logits(answer_logits(model, sentences), sentences)


def _entries(prefix: str, score: Score) -> dict[str, float]:
    return {
        f"{prefix}acc": round(score.acc, 4),
        f"{prefix}wrong_noun": round(score.wrong_noun, 4),
        f"{prefix}neither": round(score.neither, 4),
        f"{prefix}sentences": score.sentences,
    }


def winograd_metrics(model: LanguageModel, train: Tensor, held_out: Tensor) -> dict[str, float]:
    """The ``winograd/*`` metrics of one model on both splits' token ids (N, 18).

    The held-out split, the measurement, is unprefixed (``winograd/acc``); the train split
    is ``winograd/train_acc`` and so on. ``winograd/acc_crosser`` and ``.._crossed`` split
    held-out accuracy by the adjective's role. Shares are rounded to 4 places.
    """
    held_answers = answer_logits(model, held_out).argmax(dim=-1)  # (N,)
    out = _entries("winograd/", score_answers(held_answers, held_out))
    out |= _entries("winograd/train_", score_model(model, train))
    crosser = held_out[:, ANSWER_POSITION] == held_out[:, X_POSITION]  # (N,)
    for role, mask in (("crosser", crosser), ("crossed", ~crosser)):
        if mask.any():
            out[f"winograd/acc_{role}"] = round(
                score_answers(held_answers[mask], held_out[mask]).acc, 4
            )
    return out
