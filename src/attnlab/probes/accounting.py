"""Where the parameters are: E10 (one block's split) and E15 (GPT-2 small).

Both count twice, independently: by the models' formula (`block_parameter_split`,
`count_parameters_by_formula`) and by building the module on the meta device (no memory
is allocated) and summing its parameters. E15 adds a third derivation, the story's closed
form 12d^2 + 13d per block + V.d + n_ctx.d + the final LayerNorm's 2d.
"""

from dataclasses import dataclass

import torch

from attnlab.models import (
    Block,
    LanguageModel,
    ModelConfig,
    block_parameter_split,
    count_parameters_by_formula,
    count_parameters_by_module,
)
from attnlab.probes.records import Value

# A block's parameters by the first part of their name (see `Block`).
_BLOCK_PARTS = {"mixer": "attention", "mlp": "mlp", "ln1": "norm", "ln2": "norm"}
SPLIT_PARTS = ("attention", "mlp", "norm")


def _block_config(d_model: int) -> ModelConfig:
    # The P0 block (q, k, v bias-free, W_o with bias, 4x MLP, pre-norm) at this width. One
    # head: the head count does not change the count, since q, k and v are always d x 3d.
    return ModelConfig(d_model=d_model, n_head=1, n_layer=1, norm="pre", mlp=True)


def count_block_by_module(d_model: int) -> dict[str, int]:
    """Build one block on the meta device and count its parameters per part.

    Raises:
        ValueError: a parameter whose name matches no part (nothing may go uncounted).
    """
    with torch.device("meta"):
        block = Block(_block_config(d_model))
    counts = dict.fromkeys(SPLIT_PARTS, 0)
    for name, parameter in block.named_parameters():
        part = _BLOCK_PARTS.get(name.split(".")[0])
        if part is None:
            raise ValueError(f"block parameter {name!r} belongs to no part")
        counts[part] += parameter.numel()
    return counts


@dataclass(frozen=True)
class BlockSplit:
    """E10 at one width: each part by formula and by module, and the MLP share."""

    d_model: int
    by_formula: dict[str, int]
    by_module: dict[str, int]

    @property
    def total(self) -> int:
        """Parameters of the block (by formula)."""
        return sum(self.by_formula.values())

    @property
    def mlp_share(self) -> float:
        """MLP / total: 2/3 in the limit of large d (8d^2 of 12d^2)."""
        return self.by_formula["mlp"] / self.total


@dataclass(frozen=True)
class BlockSplitResult:
    """E10 over every width."""

    splits: list[BlockSplit]

    def metrics(self) -> dict[str, Value]:
        """The MLP share per width, and whether formula and module agree everywhere."""
        out: dict[str, Value] = {f"e10/mlp_share@{s.d_model}": s.mlp_share for s in self.splits}
        out["e10/formula_equals_module"] = all(s.by_formula == s.by_module for s in self.splits)
        return out

    def table(self) -> list[dict[str, Value]]:
        """One row per width: each part both ways, the total and the shares."""
        rows: list[dict[str, Value]] = []
        for s in self.splits:
            row: dict[str, Value] = {"d_model": s.d_model}
            for part in SPLIT_PARTS:
                row[f"{part}_formula"] = s.by_formula[part]
                row[f"{part}_module"] = s.by_module[part]
            row["total"] = s.total
            row |= {f"{part}_share": s.by_formula[part] / s.total for part in SPLIT_PARTS}
            rows.append(row)
        return rows


def block_split_probe(widths: list[int]) -> BlockSplitResult:
    """Run E10 at each width in ``widths``."""
    splits = []
    for d in widths:
        formula = block_parameter_split(d)
        by_formula = {part: int(formula[part]) for part in SPLIT_PARTS}
        splits.append(BlockSplit(d, by_formula, count_block_by_module(d)))
    return BlockSplitResult(splits)


def gpt2_config(
    vocab_size: int, d_model: int, n_layer: int, n_head: int, n_ctx: int
) -> ModelConfig:
    """GPT-2's architecture: learned positions, pre-norm, q/k/v biases, tied output."""
    return ModelConfig(
        vocab_size=vocab_size,
        d_model=d_model,
        n_layer=n_layer,
        n_head=n_head,
        block_size=n_ctx,
        position="learned",
        norm="pre",
        qkv_bias=True,
        tie_embeddings=True,
    )


def gpt2_closed_form(vocab_size: int, d_model: int, n_layer: int, n_ctx: int) -> dict[str, int]:
    """The story's closed form, line by line, keyed like the models' counts.

    12d^2 + 13d per block = 4d^2 + 4d (attention) + 8d^2 + 5d (MLP) + 4d (two LayerNorms);
    plus V.d (tokens), n_ctx.d (positions) and the final LayerNorm's 2d; the output layer
    is tied, so it adds nothing.
    """
    d = d_model
    lines = {
        "embedding": vocab_size * d,
        "position": n_ctx * d,
        "attention": n_layer * (4 * d * d + 4 * d),
        "mlp": n_layer * (8 * d * d + 5 * d),
        "norm": n_layer * 4 * d + 2 * d,
        "head": 0,  # tied: the output layer is the token embedding
    }
    lines["total"] = sum(lines.values())
    return lines


@dataclass(frozen=True)
class Gpt2Result:
    """E15: GPT-2 small's parameters per component, three ways."""

    closed_form: dict[str, int]
    by_formula: dict[str, int]
    by_module: dict[str, int]

    def metrics(self) -> dict[str, Value]:
        """The three totals."""
        return {
            "e15/total/closed_form": self.closed_form["total"],
            "e15/total/formula": self.by_formula["total"],
            "e15/total/module": self.by_module["total"],
        }

    def table(self) -> list[dict[str, Value]]:
        """One line per component, the total last."""
        return [
            {
                "component": part,
                "closed_form": self.closed_form[part],
                "formula": self.by_formula[part],
                "module": self.by_module[part],
            }
            for part in self.closed_form
        ]


def gpt2_probe(vocab_size: int, d_model: int, n_layer: int, n_head: int, n_ctx: int) -> Gpt2Result:
    """Run E15: GPT-2 small by closed form, by the models' formula and by a built module."""
    cfg = gpt2_config(vocab_size, d_model, n_layer, n_head, n_ctx)
    with torch.device("meta"):  # 124M parameters, none of them allocated
        model = LanguageModel(cfg)
    return Gpt2Result(
        closed_form=gpt2_closed_form(vocab_size, d_model, n_layer, n_ctx),
        by_formula=count_parameters_by_formula(cfg),
        by_module=count_parameters_by_module(model),
    )
