"""Parameter accounting: the E02 ladder, GPT-2 small (E15), the E10 split, formula == module."""

import itertools
import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from attnlab.models import (
    LanguageModel,
    ModelConfig,
    block_parameter_split,
    count_parameters_by_formula,
    count_parameters_by_module,
)

# The E02 ladder in config terms, each row adding one piece to the row above, with its
# parameter count worked out by hand: embedding 1024*128 = 131,072; head 128*1024 + 1024 =
# 132,096; positions 128*128 = 16,384; one bias-free d x 3d head 49,152; W_o 16,512;
# MLP 131,712; three LayerNorms 768.
_BARE = {"mixer": "none", "position": "none", "mlp": False, "norm": "none"}
_HEAD = {**_BARE, "mixer": "attention", "position": "learned", "n_head": 1, "d_head": 128}
LADDER = {
    "no-context": (_BARE, 263_168),
    "average": ({**_BARE, "mixer": "uniform", "residual": False}, 263_168),
    "average-pos": (
        {**_BARE, "mixer": "uniform", "residual": False, "position": "learned"},
        279_552,
    ),
    "average-residual": ({**_BARE, "mixer": "uniform", "position": "learned"}, 279_552),
    "head-replace": ({**_HEAD, "out_proj": False, "residual": False}, 328_704),
    "head-residual": ({**_HEAD, "out_proj": False}, 328_704),
    "four-heads": ({**_BARE, "mixer": "attention", "position": "learned"}, 345_216),
    "mlp": ({**_BARE, "mixer": "attention", "position": "learned", "mlp": True}, 476_928),
    "layernorm": ({}, 477_696),
}


@pytest.mark.parametrize("row", LADDER)
def test_every_ladder_row_has_its_parameter_count(row):
    overrides, expected = LADDER[row]
    cfg = ModelConfig(**overrides)
    by_formula = count_parameters_by_formula(cfg)
    by_module = count_parameters_by_module(LanguageModel(cfg))
    assert by_formula == by_module
    assert by_formula["total"] == expected


def test_ladder_steps_cost_what_the_story_says():
    total = {row: expected for row, (_, expected) in LADDER.items()}
    assert total["four-heads"] - total["head-residual"] == 16_512
    assert total["layernorm"] - total["mlp"] == 768
    assert total["no-context"] == 263_168 and total["layernorm"] == 477_696


@pytest.mark.parametrize("row", LADDER)
def test_every_ladder_row_starts_at_loss_ln_vocab(row):
    """At init no row knows anything, so the loss on random targets is about ln V.

    For logits of variance s^2 the expected loss is about ln V + s^2 / 2, and s^2 is a third
    of the variance of the stream entering the head (Kaiming-uniform weights, variance
    1/(3d)). That variance runs from near 0 (a mean over many tokens) to about 2 (a token
    plus an unnormalised sub-layer output), so the excess is between 0 and about 0.35.
    """
    torch.manual_seed(0)
    model = LanguageModel(ModelConfig(**LADDER[row][0])).eval()
    idx = torch.randint(0, 1024, (32, 129))
    with torch.no_grad():
        logits = model(idx[:, :-1])
    loss = F.cross_entropy(logits.flatten(0, 1), idx[:, 1:].flatten()).item()
    assert abs(loss - math.log(1024)) < 0.5


GPT2_SMALL = ModelConfig(
    vocab_size=50_257,
    d_model=768,
    n_layer=12,
    n_head=12,
    block_size=1024,
    qkv_bias=True,
    tie_embeddings=True,
)


def test_gpt2_small_has_124_439_808_parameters_both_ways():
    d, V = 768, 50_257
    closed_form = 12 * (12 * d * d + 13 * d) + V * d + 1024 * d + 2 * d  # E15's formula
    assert closed_form == 124_439_808
    with torch.device("meta"):  # count without allocating half a gigabyte
        model = LanguageModel(GPT2_SMALL)
    by_module = count_parameters_by_module(model)
    assert count_parameters_by_formula(GPT2_SMALL) == by_module
    assert by_module["total"] == 124_439_808
    assert by_module["head"] == 0  # tied: counted once, in the embedding


def _grid():
    axes = {
        "mixer": ["none", "uniform", "attention"],
        "position": ["none", "learned", "sinusoidal", "rope", "alibi"],
        "norm": ["none", "pre", "post"],
        "d_head": [None, 12],
        "out_proj": [True, False],
        "qkv_bias": [False, True],
        "tie_embeddings": [False, True],
        "mlp": [True, False],
    }
    for values in itertools.product(*axes.values()):
        overrides = dict(zip(axes, values, strict=True))
        try:
            yield ModelConfig(
                vocab_size=40,
                d_model=16,
                n_head=2,
                n_layer=2,
                block_size=8,
                max_positions=20,
                **overrides,
            )
        except ValueError:
            continue  # an invalid combination: the config tests cover those


def test_formula_and_module_agree_for_every_combination():
    configs = list(_grid())
    assert len(configs) > 500
    for cfg in configs:
        by_module = count_parameters_by_module(LanguageModel(cfg))
        assert count_parameters_by_formula(cfg) == by_module, cfg


def test_module_count_refuses_unaccounted_parameters():
    model = LanguageModel(ModelConfig(vocab_size=40, d_model=16, n_head=2))
    model.stray = nn.Parameter(torch.zeros(3))
    with pytest.raises(ValueError, match="stray"):
        count_parameters_by_module(model)


@pytest.mark.parametrize("d", [128, 256, 512, 768, 1024])
def test_block_split_is_two_thirds_mlp(d):
    split = block_parameter_split(d)
    assert split["attention"] == 4 * d * d + d
    assert split["mlp"] == 8 * d * d + 5 * d
    assert split["norm"] == 4 * d
    assert split["total"] == 12 * d * d + 10 * d
    assert split["mlp_share"] == pytest.approx(2 / 3, abs=2e-3)


def test_block_split_matches_a_built_block():
    cfg = ModelConfig(d_model=128, n_layer=1)
    counts = count_parameters_by_module(LanguageModel(cfg))
    split = block_parameter_split(128)
    assert (split["attention"], split["mlp"]) == (counts["attention"], counts["mlp"])
    assert split["norm"] == counts["norm"] - 2 * 128  # the model also has ln_f
