"""Every trained variant of params.yaml builds, learns, and costs what the formula says."""

import math
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from attnlab.config import load_params
from attnlab.models import LanguageModel, count_parameters_by_formula, count_parameters_by_module

PARAMS = load_params(Path(__file__).resolve().parents[2] / "params.yaml")


@pytest.mark.parametrize("name", sorted(PARAMS.variants))
def test_variant_builds_trains_a_step_and_matches_its_formula(name):
    cfg = PARAMS.variant(name).model
    torch.manual_seed(PARAMS.seed)
    model = LanguageModel(cfg)
    assert count_parameters_by_module(model) == count_parameters_by_formula(cfg)

    idx = torch.randint(0, cfg.vocab_size, (2, cfg.block_size + 1))
    logits = model(idx[:, :-1])
    assert logits.shape == (2, cfg.block_size, cfg.vocab_size)
    loss = F.cross_entropy(logits.flatten(0, 1), idx[:, 1:].flatten())
    assert torch.isfinite(loss)
    # PyTorch's default init (P0): the head's Kaiming-uniform weights give logits of
    # variance ~v/3 for inputs of variance v, and random logits raise the loss above ln(V)
    # by about half their variance. v is ~1 after LayerNorm and a few units without it
    # (embedding N(0,1) plus a mixer), so the excess stays well under 1 (0.44 at most here).
    assert math.log(cfg.vocab_size) - 0.05 < loss.item() < math.log(cfg.vocab_size) + 1.0
    loss.backward()
    for param_name, param in model.named_parameters():
        assert param.grad is not None, f"{name}: {param_name} receives no gradient"
        assert torch.isfinite(param.grad).all()


def test_the_catalogues_fixed_points():
    counts = {
        name: count_parameters_by_formula(PARAMS.variant(name).model)["total"]
        for name in PARAMS.variants
    }
    assert counts["ladder-no-context"] == 263_168
    assert counts["ladder-four-heads"] - counts["ladder-head-residual"] == 16_512
    assert counts["ladder-layernorm"] - counts["ladder-mlp"] == 768
    assert counts["ladder-layernorm"] == 477_696
    assert PARAMS.aliases["depth-1"] == "ladder-layernorm"  # E18's one block is P0's block
