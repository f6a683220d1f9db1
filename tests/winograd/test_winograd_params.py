"""The winograd params section: the real one resolves, bad ones fail naming their key."""

import copy
from pathlib import Path

import pytest

from attnlab.catalogue.winograd import SENTENCE_LENGTH
from attnlab.config import load_params, parse_params
from attnlab.config.files import read_params_mapping
from attnlab.errors import ParamsError
from attnlab.winograd.from_params import adjectives_of
from attnlab.winograd.sentences import build_vocabulary

ROOT = Path(__file__).resolve().parents[2]
PARAMS = read_params_mapping(ROOT / "params.yaml")


def _error(edit) -> str:
    params = copy.deepcopy(PARAMS)
    edit(params["winograd"])
    with pytest.raises(ParamsError) as caught:
        parse_params(params)
    return str(caught.value)


def test_six_variants_three_per_task_with_derived_sizes():
    cfg = load_params(ROOT / "params.yaml").winograd
    assert {cfg.task_of(name) for name in cfg.variants} == {"leaky", "closed"}
    for name in cfg.variants:
        variant = cfg.variant(name)
        vocabulary = build_vocabulary(cfg.nouns(cfg.task_of(name)), adjectives_of(cfg))
        assert variant.model.vocab_size == len(vocabulary)
        assert variant.model.block_size == SENTENCE_LENGTH - 1
    assert cfg.variant("closed-two-blocks").model.n_layer == 2
    assert cfg.variant("leaky-average").model.mixer == "uniform"
    assert len(cfg.closed.nouns) == 16 and {"animal", "street"} <= set(cfg.closed.nouns)


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda w: w["model"].update(vocab_size=40), "winograd.model: vocab_size is not set"),
        (lambda w: w["model"].update(block_size=18), "winograd.model: block_size is not set"),
        (lambda w: w["leaky"]["held_out"].update(share=1.0), "winograd.leaky.held_out.share:"),
        (lambda w: w["closed"].update(nouns=["dog", "cat"]), "winograd.closed.nouns:"),
        (lambda w: w["closed"].update(nounz=[]), "winograd.closed.nounz: unknown key"),
        (lambda w: w["closed"]["nouns"].append("dog"), "used twice"),
        (lambda w: w["variants"].update({"e16-average": {}}), "no Winograd experiment"),
        (
            lambda w: w["variants"]["closed-one-block"].update(model={"n_head": 3}),
            "variants.closed-one-block.model.n_head: d_model=64 is not divisible",
        ),
        (lambda w: w["maps"].update(variant="closed-three"), "maps.variant: no Winograd variant"),
        (lambda w: w["maps"].update(variant="closed-average"), "has no attention to draw"),
        (lambda w: w["maps"].update(y="zebra"), "maps.y: 'zebra' is not a noun"),
        (lambda w: w["maps"].update(adjectives=["cold"]), "maps.adjectives: 'cold'"),
    ],
)
def test_a_bad_value_is_rejected_naming_its_key(edit, expected):
    assert expected in _error(edit)


def test_an_unknown_variant_is_named():
    with pytest.raises(ParamsError, match="winograd.variants.closed-nine"):
        load_params(ROOT / "params.yaml").winograd.variant("closed-nine")
