"""Training batches of whole sentences: a pure function of (seed, step), split across ranks."""

import torch

from attnlab.winograd.sentence_batches import WinogradSentences, draw_sentences
from attnlab.winograd.sentences import Adjectives, closed_task
from attnlab.winograd.task_files import read_sentences, write_task

TASK = closed_task(["animal", "street", "dog", "cat"], Adjectives(("tired",), ("wet",)), 0.3, 3)


def _sentences() -> torch.Tensor:
    return torch.arange(20 * 18).view(20, 18)  # (N, L): every row distinct


def test_a_batch_is_whole_sentences_shifted_by_one():
    sentences = _sentences()
    batch = draw_sentences(sentences, 8, seed=1, step=4)
    assert batch.step == 4 and batch.x.shape == batch.y.shape == (8, 17)
    rows = batch.x[:, 0] // 18  # which sentence each row is
    assert torch.equal(batch.x, sentences[rows, :-1]) and torch.equal(batch.y, sentences[rows, 1:])


def test_the_batch_of_a_step_depends_on_the_seed_and_the_step_alone():
    sentences = _sentences()
    a, b = draw_sentences(sentences, 8, 1, 4), draw_sentences(sentences, 8, 1, 4)
    assert torch.equal(a.x, b.x)
    assert not torch.equal(a.x, draw_sentences(sentences, 8, 1, 5).x)
    assert not torch.equal(a.x, draw_sentences(sentences, 8, 2, 4).x)


def test_ranks_split_the_global_batch():
    sentences = _sentences()
    whole = draw_sentences(sentences, 8, 1, 4)
    halves = [draw_sentences(sentences, 8, 1, 4, rank, 2) for rank in range(2)]
    assert torch.equal(torch.cat([h.x for h in halves]), whole.x)


def test_the_data_module_trains_on_the_train_split_from_step_zero(tmp_path):
    path = tmp_path / "closed.parquet"
    write_task(TASK, path)
    data = WinogradSentences(path, batch_size=4, seed=1, steps=3)
    data.setup("fit")
    batches = list(data.train_dataloader())
    assert [b.step for b in batches] == [0, 1, 2]
    train = {tuple(row) for row in read_sentences(path, "train").tolist()}
    for batch in batches:
        for x, y in zip(batch.x.tolist(), batch.y.tolist(), strict=True):
            assert (*x, y[-1]) in train
