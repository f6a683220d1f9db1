"""The knobs are split over params.yaml and four files beside it, read as one.

Each file holds its own sections under their own names, so a key reads the same in every
file, in dvc.yaml and in ``dvc exp show``; only ``-S`` names the file first.
"""

import shutil
from pathlib import Path

import pytest
import yaml

from attnlab.config import load_params
from attnlab.config.files import (
    DEFAULT_FILE,
    DOMAIN_FILES,
    file_of,
    params_files,
    read_params_mapping,
    write_params_mapping,
)
from attnlab.errors import AttnlabError, ParamsError
from attnlab.fanout.experiment import apply_params

ROOT = Path(__file__).resolve().parents[2]


def _copy(into: Path) -> Path:
    for path in params_files(ROOT / DEFAULT_FILE):
        shutil.copy2(path, into / path.name)
    return into / DEFAULT_FILE


def test_every_file_holds_exactly_its_own_sections():
    for path in params_files(ROOT / DEFAULT_FILE):
        sections = set(yaml.safe_load(path.read_text()))
        assert sections and {file_of(name) for name in sections} == {path.name}, path.name
    homes = {name for sections in DOMAIN_FILES.values() for name in sections}
    merged = read_params_mapping(ROOT / DEFAULT_FILE)
    assert homes < set(merged)  # the domain sections, and params.yaml's besides
    assert set(yaml.safe_load((ROOT / DEFAULT_FILE).read_text())) == set(merged) - homes


def test_a_section_in_another_file_is_refused_naming_its_home(tmp_path):
    params = _copy(tmp_path)
    winograd = (tmp_path / "winograd.yaml").read_text()
    (tmp_path / "winograd.yaml").unlink()
    params.write_text(params.read_text() + winograd)
    with pytest.raises(ParamsError, match=r"params\.yaml: section 'winograd' belongs in winograd"):
        load_params(params)


def test_a_missing_file_is_refused_naming_it(tmp_path):
    params = _copy(tmp_path)
    (tmp_path / "sweeps.yaml").unlink()
    with pytest.raises(ParamsError, match=r"sweeps\.yaml: no such params file"):
        load_params(params)


def test_an_invalid_key_names_the_file_that_holds_it(tmp_path):
    params = _copy(tmp_path)
    raw = read_params_mapping(params)
    raw["winograd"]["train"]["steps"] = 0
    write_params_mapping(params, raw)
    with pytest.raises(ParamsError) as caught:
        load_params(params)
    assert str(caught.value).startswith(f"{tmp_path / 'winograd.yaml'} is invalid:\n  winograd.")


def test_written_back_the_mapping_loads_the_same(tmp_path):
    params = _copy(tmp_path)
    write_params_mapping(params, read_params_mapping(ROOT / DEFAULT_FILE))
    assert load_params(params) == load_params(ROOT / DEFAULT_FILE)


def test_a_domain_key_without_its_file_is_refused_with_the_spelling_dvc_needs(tmp_path):
    _copy(tmp_path)
    before = {path.name: path.read_bytes() for path in params_files(tmp_path / DEFAULT_FILE)}
    with pytest.raises(AttnlabError, match="write -S winograd.yaml:winograd.train.steps=500"):
        apply_params(tmp_path, ["winograd.train.steps=500"])
    after = {path.name: path.read_bytes() for path in params_files(tmp_path / DEFAULT_FILE)}
    assert after == before


def test_a_domain_key_with_its_file_changes_that_file_alone(tmp_path):
    params = _copy(tmp_path)
    before = {path.name: path.read_text() for path in params_files(params)}
    apply_params(tmp_path, ["winograd.yaml:winograd.train.steps=500"])
    after = {path.name: path.read_text() for path in params_files(params)}
    assert [name for name in before if before[name] != after[name]] == ["winograd.yaml"]
    assert load_params(params).winograd.train.steps == 500
