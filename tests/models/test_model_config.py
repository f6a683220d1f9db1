"""ModelConfig: defaults, derived values, and invalid combinations naming their field."""

import dataclasses

import pytest

from attnlab.models import ModelConfig


def test_defaults_are_the_p0_block():
    cfg = ModelConfig()
    assert (cfg.vocab_size, cfg.d_model, cfg.n_layer, cfg.n_head) == (1024, 128, 1, 4)
    assert (cfg.mixer, cfg.position, cfg.norm) == ("attention", "learned", "pre")
    assert (cfg.head_dim, cfg.value_dim, cfg.positions) == (32, 32, 128)


def test_derived_values_follow_the_fields():
    cfg = ModelConfig(n_head=1, d_head=1024, max_positions=256)
    assert (cfg.head_dim, cfg.value_dim, cfg.positions) == (1024, 128, 256)


def test_config_is_frozen_and_keyword_only():
    cfg = ModelConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.d_model = 64  # type: ignore[misc]
    with pytest.raises(TypeError):
        ModelConfig(1024)  # type: ignore[misc]


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"n_head": 3}, "n_head"),
        ({"n_head": 3, "d_head": 32}, "n_head"),  # values still need d_model / n_head
        ({"position": "alibi", "mixer": "uniform"}, "position"),
        ({"position": "rope", "mixer": "none"}, "position"),
        ({"position": "rope", "n_head": 1, "d_head": 33}, "d_head"),
        ({"position": "rope", "d_model": 132, "n_head": 4}, "d_head"),  # head_dim 33
        ({"position": "sinusoidal", "d_model": 127, "n_head": 1}, "d_model"),
        ({"max_positions": 64}, "max_positions"),
        ({"d_model": 0}, "d_model"),
        ({"vocab_size": -1}, "vocab_size"),
        ({"n_layer": 0}, "n_layer"),
        ({"block_size": 0}, "block_size"),
        ({"d_head": 0}, "d_head"),
        ({"dropout": 1.0}, "dropout"),
        ({"dropout": -0.1}, "dropout"),
        ({"mixer": "mean"}, "mixer"),
        ({"position": "absolute"}, "position"),
        ({"norm": "sandwich"}, "norm"),
        ({"n_head": True}, "n_head"),
        ({"d_model": 128.0}, "d_model"),
        ({"residual": "yes"}, "residual"),
    ],
)
def test_invalid_configs_raise_naming_the_field(overrides, field):
    with pytest.raises(ValueError, match=rf"^{field}: "):
        ModelConfig(**overrides)


def test_error_messages_say_what_is_wrong():
    with pytest.raises(ValueError, match=r"^n_head: d_model=128 is not divisible by n_head=3$"):
        ModelConfig(n_head=3)
    with pytest.raises(ValueError, match=r"^position: alibi needs mixer=attention$"):
        ModelConfig(position="alibi", mixer="none")
    with pytest.raises(ValueError, match=r"^d_head: rope needs an even head width, got 33$"):
        ModelConfig(position="rope", n_head=1, d_head=33)
    with pytest.raises(ValueError, match=r"^max_positions: must be >= block_size \(128\), got 64"):
        ModelConfig(max_positions=64)


@pytest.mark.parametrize(
    "overrides",
    [
        {"mixer": "none", "position": "none", "mlp": False, "norm": "none"},
        {"mixer": "uniform", "position": "learned", "residual": False},
        {"position": "rope", "n_head": 1, "d_head": 1024},
        {"position": "alibi", "n_head": 6, "d_model": 96},
        {"norm": "post", "n_layer": 12, "dropout": 0.1},
    ],
)
def test_valid_combinations_build(overrides):
    ModelConfig(**overrides)
