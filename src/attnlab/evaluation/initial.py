"""The model at initialisation, rebuilt from the seed (E09's init statistics, E11).

E09 compares score statistics at initialisation with those after training, and E11
measures gradient norms before any step; neither is in a checkpoint, so both rebuild the
initial model. The rule is one function, so that training and evaluation cannot disagree
about what "initialisation" means.
"""

from __future__ import annotations

import torch

from attnlab.models import LanguageModel, ModelConfig


def build_initial_model(cfg: ModelConfig, seed: int) -> LanguageModel:
    """The model exactly as training initialises it: ``torch.manual_seed(seed)``, then build.

    PyTorch's default initialisers (P0) draw from the global CPU generator, so the
    weights are a function of ``seed`` alone as long as nothing draws between seeding and
    building. The model is built on the CPU (move it afterwards), and the caller's global
    RNG state is left exactly as it was.
    """
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return LanguageModel(cfg)
