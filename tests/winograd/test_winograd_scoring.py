"""Scoring the answer after ``so the``: accuracy, wrong noun, neither, on known logits."""

import pytest
import torch

from attnlab.catalogue.winograd import QUERY_POSITION
from attnlab.models import LanguageModel, ModelConfig
from attnlab.winograd.scoring import (
    answer_logits,
    score_answers,
    score_logits,
    winograd_metrics,
)
from attnlab.winograd.sentences import Adjectives, Sentence, encode

ADJECTIVES = Adjectives(("tired",), ("wet",))
VOCAB = ("the", "did", "not", "cross", "because", "it", "was", "too", ",", "so", "waited", ".",
         "tired", "wet", "dog", "cat", "road")  # fmt: skip
DOG, CAT, ROAD = VOCAB.index("dog"), VOCAB.index("cat"), VOCAB.index("road")


def _sentences(*specs: tuple[str, str, str]) -> torch.Tensor:
    role = {"tired": "crosser", "wet": "crossed"}
    rows = [encode(Sentence(x, y, a, role[a], "train").words, VOCAB) for x, y, a in specs]
    return torch.tensor(rows)  # (N, 18)


def _one_hot_logits(answers: list[int]) -> torch.Tensor:
    logits = torch.zeros(len(answers), len(VOCAB))
    logits[torch.arange(len(answers)), torch.tensor(answers)] = 5.0
    return logits  # (N, V)


def test_hand_made_logits_give_the_known_shares():
    sentences = _sentences(
        ("dog", "cat", "tired"),  # referent dog
        ("dog", "cat", "wet"),  # referent cat
        ("cat", "dog", "tired"),  # referent cat
        ("cat", "dog", "wet"),  # referent dog
        ("dog", "road", "wet"),  # referent road
    )
    # right, wrong noun, right, wrong noun, neither (a noun, but not of this pair)
    score = score_logits(_one_hot_logits([DOG, DOG, CAT, CAT, CAT]), sentences)
    assert score.acc == pytest.approx(2 / 5)
    assert score.wrong_noun == pytest.approx(2 / 5)
    assert score.neither == pytest.approx(1 / 5)
    assert score.sentences == 5


def test_a_model_that_ignores_order_answers_every_reversed_pair_backwards():
    # Answer by the bag of words of the training sentence (dog, cat, tired) -> dog.
    sentences = _sentences(("cat", "dog", "tired"), ("cat", "dog", "wet"))
    score = score_answers(torch.tensor([DOG, CAT]), sentences)
    assert (score.acc, score.wrong_noun, score.neither) == (0.0, 1.0, 0.0)


def test_a_function_word_answer_is_neither():
    score = score_answers(torch.tensor([VOCAB.index("the")]), _sentences(("dog", "cat", "wet")))
    assert (score.acc, score.wrong_noun, score.neither) == (0.0, 0.0, 1.0)


def test_mismatched_shapes_are_refused():
    with pytest.raises(ValueError):
        score_answers(torch.tensor([DOG, CAT]), _sentences(("dog", "cat", "wet")))


class _Oracle(torch.nn.Module):
    """Answers with whatever the sentence's answer token is: reads the future if it can."""

    training = False

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        logits = torch.zeros(*idx.shape, len(VOCAB))
        if idx.shape[1] > QUERY_POSITION + 1:  # the answer is visible: cheat
            logits[:, QUERY_POSITION, idx[:, QUERY_POSITION + 1]] = 1.0
        return logits


def test_the_model_never_sees_the_answer_it_is_asked_for():
    sentences = _sentences(("dog", "cat", "tired"))
    logits = answer_logits(_Oracle(), sentences)  # type: ignore[arg-type]
    assert logits.shape == (1, len(VOCAB)) and torch.all(logits == 0)


def test_metrics_name_both_splits_and_both_roles():
    torch.manual_seed(0)
    cfg = ModelConfig(vocab_size=len(VOCAB), d_model=16, n_head=2, block_size=17)
    sentences = _sentences(("dog", "cat", "tired"), ("cat", "dog", "wet"), ("dog", "road", "wet"))
    metrics = winograd_metrics(LanguageModel(cfg), sentences[:2], sentences)
    for prefix in ("winograd/", "winograd/train_"):
        shares = [metrics[f"{prefix}{k}"] for k in ("acc", "wrong_noun", "neither")]
        assert sum(shares) == pytest.approx(1.0, abs=1e-3)
    assert metrics["winograd/sentences"] == 3 and metrics["winograd/train_sentences"] == 2
    assert {"winograd/acc_crosser", "winograd/acc_crossed"} <= set(metrics)
