"""Stage ``probes``: the computed experiments E03-E07, E10, E12, E15 and E19 (no training)."""

from attnlab import paths, result_code
from attnlab.config import load_params
from attnlab.probes.accounting import block_split_probe, gpt2_probe
from attnlab.probes.attention import equivariance_probe, parity_probe
from attnlab.probes.averages import averages_probe, shuffle_probe
from attnlab.probes.figures import plot_effective_tokens, plot_frozen_fraction
from attnlab.probes.records import ProbeResult, write_table
from attnlab.probes.scores import (
    EffectiveTokens,
    FrozenRows,
    dot_product_probe,
    softmax_rows_probe,
)
from attnlab.stages.command import DEFAULT_PARAMS, ParamsFile, run_stage

# Experiment -> the stem of its table under reports/tables/probes/.
TABLE_NAMES = {
    "e03": "e03_shuffle",
    "e04": "e04_averages",
    "e05": "e05_dot_products",
    "e06": "e06_effective_tokens",
    "e07": "e07_frozen_rows",
    "e10": "e10_block_split",
    "e12": "e12_equivariance",
    "e15": "e15_gpt2_small",
    "e19": "e19_parity",
}


def main(
    params: ParamsFile = DEFAULT_PARAMS,
) -> None:
    """Run the computed experiments and record each as metrics, a table and figures.

    Reads: params `seed` and `probes` (every size: dims, pairs, rows, row_length,
    frozen_above, example_d, shuffle, averaging, widths, equivariance, parity, gpt2).

    Writes: `reports/metrics/probes/EXP.json` for EXP in e03 e04 e05 e06 e07 e10 e12 e15
    e19; one tidy table per experiment, `reports/tables/probes/EXP_NAME.tsv`, plus
    `e06_example_row.tsv`; `reports/figures/e06_effective_tokens.png` and
    `reports/figures/e07_frozen_fraction.png`.
    """
    loaded = load_params(params)
    cfg, seed = loaded.probes, loaded.seed
    draw = softmax_rows_probe(
        cfg.dims, cfg.rows, cfg.row_length, cfg.frozen_above, cfg.example_d, seed
    )
    shuffle = cfg.shuffle
    results: dict[str, ProbeResult] = {
        "e03": shuffle_probe(shuffle.tokens, shuffle.width, shuffle.permutations, seed),
        "e04": averages_probe(cfg.averaging.tokens, cfg.averaging.width, seed),
        "e05": dot_product_probe(cfg.dims, cfg.pairs, seed),
        "e06": EffectiveTokens(draw),
        "e07": FrozenRows(draw),
        "e10": block_split_probe(cfg.widths),
        "e12": equivariance_probe(**cfg.equivariance.model_dump(), seed=seed),
        "e15": gpt2_probe(**cfg.gpt2.model_dump()),
        "e19": parity_probe(**cfg.parity.model_dump(), seed=seed),
    }
    stamp = result_code.stamp("probes")
    for name, result in results.items():
        paths.write_metrics(
            paths.probe_metrics(name), {**result.metrics(), result_code.CODE: stamp}
        )
        write_table(paths.probe_table(TABLE_NAMES[name]), result.table())
        print(f"{name}: {_headline(result.metrics())}")
    example = EffectiveTokens(draw).example_table()
    write_table(paths.probe_table("e06_example_row"), example)
    top = sorted(example, key=lambda row: -float(row["weight_undivided"] or 0))[:3]
    print(f"e06 example row at d={cfg.example_d}, its three heaviest keys:")
    for row in top:
        print(
            f"  key {row['key']}: score {row['score']:.2f}, weight {row['weight_divided']:.4f} "
            f"divided, {row['weight_undivided']:.4f} undivided"
        )
    plot_effective_tokens(draw, paths.figure("e06_effective_tokens.png"))
    plot_frozen_fraction(draw, paths.figure("e07_frozen_fraction.png"))


def _headline(metrics: dict) -> str:
    """The first few metrics of an experiment, for the log."""
    shown = [
        f"{name}={value:.4g}" if isinstance(value, float) else f"{name}={value}"
        for name, value in ((key.split("/", 1)[1], value) for key, value in metrics.items())
    ]
    return ", ".join(shown[:4]) + (" ..." if len(shown) > 4 else "")


if __name__ == "__main__":
    run_stage(main)
