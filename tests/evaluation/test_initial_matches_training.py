"""The initial model E09 and E11 rebuild is the one training starts from, weight for weight.

Under a seed other than the root one, and with the init seed pinned: evaluation rebuilds
from the init seed the run recorded, not from the root seed.
"""

import copy
from pathlib import Path

import pytest
import torch

from attnlab.catalogue import protocol_variants_of
from attnlab.config import parse_params
from attnlab.config.files import read_params_mapping
from attnlab.data.tokens import TokenSplit, write_split
from attnlab.evaluation import build_initial_model
from attnlab.models import LanguageModel
from attnlab.training import FitOptions, TrainJob, fit_parts, train_variant
from attnlab.training import fit as training_fit

PARAMS = read_params_mapping(Path(__file__).resolve().parents[2] / "params.yaml")


class _Built(Exception):
    """Raised once training has built its model: nothing after that matters here."""


@pytest.mark.parametrize(
    ("variant", "init_seed"), [("dk-1024-unscaled", None), ("norm-post", None), ("norm-post", 7)]
)
def test_training_builds_exactly_the_model_build_initial_model_rebuilds(
    variant, init_seed, tmp_path, monkeypatch
):
    params = copy.deepcopy(PARAMS)
    params["model"].update(d_model=32, block_size=16)
    # The row and its protocol variants move together: each stays its row plus the overrides.
    for name in (variant, *protocol_variants_of(variant)):
        params["variants"][name].setdefault("train", {})["init_seed"] = init_seed
    job = TrainJob.from_params(parse_params(params), variant, seed=PARAMS["seeds"][1])
    assert job.init_seed == (PARAMS["seeds"][1] if init_seed is None else init_seed)
    tokens = tmp_path / "train.parquet"
    write_split(TokenSplit("train", torch.arange(2000).numpy() % 1024), tokens, "0" * 64)

    built: list[dict[str, torch.Tensor]] = []

    class Recording(LanguageModel):
        def __init__(self, cfg) -> None:
            super().__init__(cfg)
            built.append({k: v.clone() for k, v in self.state_dict().items()})

    def stop(*args, **kwargs):
        raise _Built

    monkeypatch.setenv("WANDB_MODE", "disabled")
    monkeypatch.setattr(fit_parts, "LanguageModel", Recording)  # where the fit builds it
    monkeypatch.setattr(training_fit, "build_trainer", stop)  # the next thing after the model
    with pytest.raises(_Built):
        options = FitOptions(tokens, tmp_path / "runs", tmp_path / "wandb", live_progress=False)
        train_variant(job, options)

    rebuilt = build_initial_model(job.variant.model, job.init_seed).state_dict()
    assert len(built) == 1 and built[0].keys() == rebuilt.keys()
    for name, value in rebuilt.items():
        assert torch.equal(built[0][name], value), name
