"""A trained model's folder: read back bit for bit, and refused whole when a file changed.

No training: a freshly built model and the configuration a train job records are saved
as the train stage saves them (:func:`save_trained_model`) and read back as every later
stage reads them (:func:`load_trained_model`).
"""

import json
from pathlib import Path

import pytest
import torch

from attnlab.config import load_params
from attnlab.errors import AttnlabError
from attnlab.models import LanguageModel
from attnlab.runs import load_trained_model, save_trained_model
from attnlab.runs.model_folder import CONFIG, WEIGHTS
from attnlab.training import TrainJob

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    job = TrainJob.from_params(load_params(ROOT / "params.yaml"), "ladder-mlp", 1338)
    torch.manual_seed(0)
    model = LanguageModel(job.variant.model)
    folder = tmp_path_factory.mktemp("model")
    save_trained_model(model, job.config(), folder)
    return job, model, folder


def test_the_model_and_its_variant_read_back_as_saved(saved):
    job, model, folder = saved
    trained = load_trained_model(folder)
    assert trained.name == "ladder-mlp" and trained.train == job.variant.train.model_dump()
    assert trained.model.config == job.variant.model
    assert trained.seeds == {"seed": 1338, "init_seed": 1338, "data_seed": 1338}
    assert not trained.model.training
    expected, found = model.state_dict(), trained.model.state_dict()
    assert expected.keys() == found.keys()
    assert all(torch.equal(expected[key], found[key]) for key in expected)


@pytest.mark.parametrize("name", [CONFIG, WEIGHTS])
def test_a_changed_file_is_refused_naming_it(saved, tmp_path, name):
    _, _, folder = saved
    copy = tmp_path / "model"
    copy.mkdir()
    for file in folder.iterdir():
        (copy / file.name).write_bytes(file.read_bytes())
    if name == CONFIG:
        config = json.loads((copy / CONFIG).read_text())
        (copy / CONFIG).write_text(json.dumps({**config, "seed": 7}))
    else:
        data = bytearray((copy / WEIGHTS).read_bytes())
        data[-100] ^= 1
        (copy / WEIGHTS).write_bytes(bytes(data))
    with pytest.raises(AttnlabError, match=name):
        load_trained_model(copy)
