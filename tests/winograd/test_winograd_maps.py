"""The attention rows at the query position, their table and their heatmaps."""

import json

import pytest
import torch

from attnlab.catalogue.winograd import QUERY_POSITION
from attnlab.models import LanguageModel, ModelConfig
from attnlab.winograd.figures import draw_adjectives, draw_blocks
from attnlab.winograd.maps import maps_record, maps_table, probe_sentences, query_rows
from attnlab.winograd.sentences import Adjectives, build_vocabulary

ADJECTIVES = Adjectives(("tired", "scared", "slow", "weak"), ("wet", "wide", "busy", "steep"))
VOCAB = build_vocabulary(["animal", "street", "dog"], ADJECTIVES)


def _model(**overrides) -> LanguageModel:
    torch.manual_seed(0)
    cfg = {"vocab_size": len(VOCAB), "d_model": 16, "n_head": 4, "block_size": 17, **overrides}
    return LanguageModel(ModelConfig(**cfg))


def _rows(model: LanguageModel):
    return query_rows(model, probe_sentences("animal", "street", ADJECTIVES, "train"), VOCAB)


def test_one_row_per_block_per_adjective_over_the_words_read():
    rows = _rows(_model(n_layer=2))
    assert [row.sentence.adjective for row in rows] == [*ADJECTIVES.crosser, *ADJECTIVES.crossed]
    for row in rows:
        assert len(row.words) == QUERY_POSITION + 1 and row.words[-2:] == ("so", "the")
        assert row.words[1] == "animal" and row.words[6] == "street"
        assert len(row.weights) == 2
        for weights in row.weights:
            assert len(weights) == QUERY_POSITION + 1
            assert sum(weights) == pytest.approx(1.0, abs=1e-4)
        assert row.answer in VOCAB and 0.0 <= row.p_referent <= 1.0


def test_the_average_looks_at_every_word_equally():
    average = _model(mixer="uniform", residual=False, position="none", mlp=False, norm="none")
    for row in _rows(average):
        assert row.weights == [[pytest.approx(1 / 15, abs=1e-5)] * 15]


def test_head_average_matches_the_model_read_out():
    model = _model(n_layer=2)
    row = _rows(model)[4]  # "wet"
    idx = torch.tensor([[VOCAB.index(w) for w in row.words]])
    records = model.attention_maps(idx)
    expected = records[1].weights[0, :, QUERY_POSITION].mean(dim=0)  # (T,)
    assert row.weights[1] == pytest.approx(expected.tolist(), abs=1e-5)


def test_a_bigram_model_has_no_maps():
    with pytest.raises(ValueError, match="no attention"):
        _rows(_model(mixer="none", position="none"))


def test_the_record_the_table_and_the_figures(tmp_path):
    rows = _rows(_model(n_layer=2))
    record = maps_record("closed-two-blocks", rows)
    json.dumps(record)  # JSON-ready
    assert (record["x"], record["y"], record["pair_split"]) == ("animal", "street", "train")
    table = maps_table(rows)
    assert len(table) == 8 * 2 * 15
    assert {line["block"] for line in table} == {1, 2}
    first, second = tmp_path / "a.png", tmp_path / "b.png"
    draw_blocks(record, ["tired", "wet"], first)
    draw_adjectives(record, second)
    assert first.read_bytes()[:4] == second.read_bytes()[:4] == b"\x89PNG"
    again = tmp_path / "again.png"
    draw_adjectives(record, again)
    assert again.read_bytes() == second.read_bytes()  # same maps, same bytes
