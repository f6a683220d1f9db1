"""Parameter accounting: by formula from a config, and by counting a built module.

Serves E02 (each ladder row's cost), E10 (the attention / MLP / LayerNorm split of one
block) and E15 (GPT-2 small's 124,439,808 parameters). The two counts are independent
derivations of the same numbers: the formula never looks at a module, the module count
never looks at the config, and the tests make them agree for every variant.
"""

from __future__ import annotations

from torch import nn

from attnlab.architecture import ModelConfig

COMPONENTS = ("embedding", "position", "attention", "mlp", "norm", "head")


def _attention(cfg: ModelConfig) -> int:
    """Parameters of one attention mixer: q, k, v (with optional biases) and W_o."""
    if cfg.mixer != "attention":
        return 0  # the uniform mean has no parameters
    qkv_width = 2 * cfg.n_head * cfg.head_dim + cfg.n_head * cfg.value_dim
    count = cfg.d_model * qkv_width + (qkv_width if cfg.qkv_bias else 0)
    if cfg.out_proj:
        count += cfg.n_head * cfg.value_dim * cfg.d_model + cfg.d_model
    return count


def _mlp(d_model: int) -> int:
    """Parameters of one d -> 4d -> d MLP, both layers with bias: 8d^2 + 5d."""
    return 2 * 4 * d_model * d_model + 4 * d_model + d_model


def _norms(cfg: ModelConfig) -> int:
    """Parameters of every LayerNorm (2d each: gain and bias)."""
    if cfg.norm == "none":
        return 0
    per_block = int(cfg.mixer != "none") + int(cfg.mlp)  # ln1 guards the mixer, ln2 the MLP
    final = int(cfg.norm == "pre")  # ln_f; post-norm ends normalised already
    return 2 * cfg.d_model * (cfg.n_layer * per_block + final)


def count_parameters_by_formula(cfg: ModelConfig) -> dict[str, int]:
    """Count a model's parameters per component from its config alone.

    Returns:
        Counts keyed embedding, position, attention, mlp, norm, head and total. A tied
        output layer counts 0 in head: its weight is the embedding's.
    """
    counts = {
        "embedding": cfg.vocab_size * cfg.d_model,
        "position": cfg.positions * cfg.d_model if cfg.position == "learned" else 0,
        "attention": cfg.n_layer * _attention(cfg),
        "mlp": cfg.n_layer * _mlp(cfg.d_model) if cfg.mlp else 0,
        "norm": _norms(cfg),
        "head": 0 if cfg.tie_embeddings else cfg.d_model * cfg.vocab_size + cfg.vocab_size,
    }
    counts["total"] = sum(counts.values())
    return counts


# Where each parameter of a LanguageModel lives, by the first parts of its name.
_TOP_LEVEL = {"tok": "embedding", "pos": "position", "ln_f": "norm", "head": "head"}
_IN_BLOCK = {"mixer": "attention", "mlp": "mlp", "ln1": "norm", "ln2": "norm"}


def _component(name: str) -> str:
    parts = name.split(".")
    if parts[0] == "blocks" and len(parts) > 2 and parts[2] in _IN_BLOCK:
        return _IN_BLOCK[parts[2]]
    if parts[0] in _TOP_LEVEL:
        return _TOP_LEVEL[parts[0]]
    # A parameter nobody accounted for must fail loudly, not vanish from the totals.
    raise ValueError(f"parameter {name!r} belongs to no known component")


def count_parameters_by_module(model: nn.Module) -> dict[str, int]:
    """Count a built `LanguageModel`'s parameters per component.

    Shared (tied) parameters are counted once, under the first module that registered
    them: the token embedding. Works on the meta device, so GPT-2 small can be counted
    without allocating it.

    Returns:
        Counts with the same keys as `count_parameters_by_formula`.

    Raises:
        ValueError: If a parameter's name matches no component.
    """
    counts = dict.fromkeys(COMPONENTS, 0)
    for name, parameter in model.named_parameters():  # deduplicates tied parameters
        counts[_component(name)] += parameter.numel()
    counts["total"] = sum(counts.values())
    return counts


def block_parameter_split(d_model: int) -> dict[str, int | float]:
    """Split one standard block's parameters between attention, MLP and LayerNorm (E10).

    The block is the P0 one at width `d_model`: q, k, v bias-free, W_o with bias (4d^2 + d),
    a 4x GELU MLP (8d^2 + 5d) and two pre-norm LayerNorms (4d). The head count does not
    matter: q, k and v together are always d x 3d.

    Returns:
        attention, mlp, norm and total parameter counts, and mlp_share = mlp / total,
        which tends to 2/3 as d grows.
    """
    cfg = ModelConfig(d_model=d_model, n_head=1, n_layer=1, norm="pre", mlp=True)
    split: dict[str, int | float] = {
        "attention": _attention(cfg),
        "mlp": _mlp(d_model),
        "norm": _norms(cfg) - 2 * d_model,  # the block's ln1 and ln2, without the final ln_f
    }
    split["total"] = sum(split.values())
    split["mlp_share"] = split["mlp"] / split["total"]
    return split
