"""The params loader rejects every kind of bad value before any work, naming the key."""

import copy
from pathlib import Path

import pytest

from attnlab.config import load_params, parse_params
from attnlab.config.files import read_params_mapping
from attnlab.errors import ParamsError

PARAMS = read_params_mapping(Path(__file__).resolve().parents[2] / "params.yaml")


def _with(edit) -> dict:
    params = copy.deepcopy(PARAMS)
    edit(params)
    return params


def _error(edit) -> str:
    with pytest.raises(ParamsError) as caught:
        parse_params(_with(edit))
    return str(caught.value)


def test_the_real_params_file_loads_and_resolves_every_variant():
    params = load_params(Path(__file__).resolve().parents[2] / "params.yaml")
    assert params.bpe.vocab_size == 1024
    for name in params.variants:
        assert params.variant(name).model.vocab_size == params.bpe.vocab_size


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda p: p["download"].update(sha256="abc"), "download.sha256: expected 64 hex"),
        (lambda p: p["download"].update(url="ftp://x"), "download.url: expected an http(s)"),
        (lambda p: p["download"].update(retries=0), "download.retries:"),
        (lambda p: p["bpe"].update(vocab_size="abc"), "bpe.vocab_size: Input should be a valid"),
        (lambda p: p["bpe"].update(vocab_size=200), "bpe.vocab_size: Input should be greater"),
        (lambda p: p["bpe"].update(vocab_size=True), "bpe.vocab_size:"),
        (lambda p: p["bpe"].update(vocab_siz=512), "bpe.vocab_siz: unknown key"),
        (lambda p: p["tokenize"].update(val_fraction=1.5), "tokenize.val_fraction:"),
        (lambda p: p.pop("tokenize"), "tokenize: required key is missing"),
        (lambda p: p.update(seed=-1), "seed:"),
        (lambda p: p["train"].update(lr=0), "train.lr: Input should be greater than 0"),
        (lambda p: p["train"].update(betas=[0.9]), "train.betas:"),
        (lambda p: p["model"].update(vocab_size=12), "model: vocab_size is not set here"),
        (
            lambda p: p["variants"]["ladder-mlp"].update(model={"n_head": 3}),
            "variants.ladder-mlp.model.n_head: d_model=128 is not divisible by n_head=3",
        ),
        (
            lambda p: p["variants"]["ladder-mlp"].update(model={"d_kk": 32}),
            "variants.ladder-mlp.model.d_kk: unknown key",
        ),
        (
            lambda p: p["variants"]["ladder-mlp"].update(
                model={"position": "alibi", "mixer": "uniform"}
            ),
            "variants.ladder-mlp.model.position: alibi needs mixer=attention",
        ),
        (
            lambda p: p["variants"]["norm-pre"].update(train={"warmup_steps": 5000}),
            "variants.norm-pre.train: warmup_steps (5000) must not exceed steps",
        ),
        (
            lambda p: p["variants"]["norm-pre"].update(train={"lr": "fast"}),
            "variants.norm-pre.train.lr: Input should be a valid number",
        ),
        (lambda p: p["variants"].update({"Bad_Name": {}}), "variants.Bad_Name"),
        # An alias (a row that is the same run as a variant) must name one trained variant.
        (
            lambda p: p["aliases"].update({"depth-1": "ladder-nope"}),
            "aliases.depth-1: no variant 'ladder-nope' to share; known: depth-2, dk-1024",
        ),
        (
            lambda p: p["variants"].update({"depth-1": {}}),
            "aliases.depth-1: also a key of variants; an alias has no knobs of its own",
        ),
        (
            lambda p: p["aliases"].update({"depth-one": "depth-1"}),
            "aliases.depth-one: 'depth-1' is itself an alias (of ladder-layernorm); name the "
            "trained variant: ladder-layernorm",
        ),
        (
            lambda p: p["aliases"].update({"Depth_1": "ladder-layernorm"}),
            "aliases.Depth_1: expected a kebab-case <experiment>-<row> name",
        ),
        (lambda p: p["aliases"].update({"depth-3": 3}), "aliases.depth-3: Input should be"),
        (lambda p: p.pop("aliases"), "aliases: required key is missing"),
        # Two stages would write one run's files: refused before DVC reads dvc.yaml.
        (
            lambda p: p["extra_seeds"]["seeds"].append(p["seeds"][0]),
            "extra_seeds.seeds: 1337 is one of seeds already",
        ),
        (
            lambda p: p["extra_seeds"]["seeds"].append(p["extra_seeds"]["seeds"][0]),
            "extra_seeds.seeds: 1340 is listed twice",
        ),
        (
            lambda p: p["extra_seeds"]["winograd_seeds"].append(p["seeds"][1]),
            "extra_seeds.winograd_seeds: 1338 is one of seeds already",
        ),
        (
            lambda p: p["extra_seeds"]["winograd_seeds"].append(
                p["extra_seeds"]["winograd_seeds"][0]
            ),
            "extra_seeds.winograd_seeds: 1340 is listed twice",
        ),
        (
            lambda p: p["extra_seeds"]["variants"].append("depth-1"),
            "extra_seeds.variants: depth-1 is not one of variants",  # an alias: no stages
        ),
        (
            lambda p: p["extra_seeds"]["winograd_variants"].append("ladder-mlp"),
            "extra_seeds.winograd_variants: ladder-mlp is not one of winograd.variants",
        ),
    ],
)
def test_a_bad_value_is_rejected_naming_its_key(edit, expected):
    assert expected in _error(edit)


def test_a_variant_listed_in_extra_seeds_runs_under_both_lists_of_seeds():
    params = parse_params(_with(lambda p: None))
    listed, other = params.extra_seeds.variants[0], "norm-pre"
    assert other not in params.extra_seeds.variants
    assert params.seeds_of(listed) == [*params.seeds, *params.extra_seeds.seeds]
    assert params.seeds_of(other) == params.seeds


def test_a_winograd_model_runs_under_the_winograd_seeds_only():
    def winograd_seeds_of_their_own(p: dict) -> None:
        p["extra_seeds"]["winograd_seeds"] = [1350, 1351]

    params = parse_params(_with(winograd_seeds_of_their_own))
    winograd = params.extra_seeds.winograd_variants[0]
    assert params.seeds_of(winograd) == [*params.seeds, 1350, 1351]
    language_model = params.extra_seeds.variants[0]
    assert params.seeds_of(language_model) == [*params.seeds, *params.extra_seeds.seeds]
    assert 1350 not in params.extra_seeds.seeds


def test_every_bad_key_is_reported_at_once():
    def edit(params):
        params["download"]["sha256"] = "0" * 63
        params["bpe"]["vocab_size"] = "big"

    message = _error(edit)
    assert "download.sha256" in message and "bpe.vocab_size" in message


def test_an_unknown_variant_lists_the_known_ones():
    params = parse_params(PARAMS)
    with pytest.raises(ParamsError, match="variants.nope: no such variant; known: .*ladder-mlp"):
        params.variant("nope")


def test_a_missing_or_malformed_file_is_a_params_error(tmp_path):
    with pytest.raises(ParamsError, match="no such params file"):
        load_params(tmp_path / "absent.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("seed: [1, 2\n")
    with pytest.raises(ParamsError, match="not valid YAML"):
        load_params(broken)


def test_params_are_frozen():
    params = parse_params(PARAMS)
    with pytest.raises(ValueError, match="frozen"):
        params.bpe.vocab_size = 512
