"""E10 and E15: parameter accounting by formula and by a built module."""

import pytest

from attnlab.probes.accounting import block_split_probe, count_block_by_module, gpt2_probe


def test_the_mlp_holds_two_thirds_of_a_block_at_every_width():
    result = block_split_probe([128, 256, 512, 768, 1024])
    for split in result.splits:
        assert split.mlp_share == pytest.approx(2 / 3, abs=0.003), split
        assert split.by_formula == split.by_module
    assert result.metrics()["e10/formula_equals_module"] is True


def test_a_block_at_128_splits_as_worked_out_by_hand():
    # q, k, v 3 * 128^2 + W_o 128^2 + 128; MLP 8 * 128^2 + 5 * 128; two LayerNorms 4 * 128.
    assert count_block_by_module(128) == {"attention": 65_664, "mlp": 131_712, "norm": 512}


def test_gpt2_small_is_124_439_808_three_ways():
    result = gpt2_probe(vocab_size=50257, d_model=768, n_layer=12, n_head=12, n_ctx=1024)
    assert set(result.metrics().values()) == {124_439_808}
    lines = result.table()
    assert lines[-1]["component"] == "total"
    for column in ("closed_form", "formula", "module"):
        assert sum(line[column] for line in lines[:-1]) == lines[-1][column]
    assert all(line["closed_form"] == line["formula"] == line["module"] for line in lines)
