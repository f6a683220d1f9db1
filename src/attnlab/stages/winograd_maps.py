"""Stage ``winograd-maps``: where the two-block closed model looks when it answers (E17)."""

import csv

from attnlab import paths, result_code
from attnlab.config import load_params
from attnlab.runs.model_folder import load_trained_model
from attnlab.stages.command import DEFAULT_PARAMS, ParamsFile, RunSeed, run_stage
from attnlab.winograd.figures import draw_adjectives, draw_blocks
from attnlab.winograd.from_params import adjectives_of
from attnlab.winograd.maps import maps_record, maps_table, probe_sentences, query_rows
from attnlab.winograd.task_files import pair_split, read_vocabulary


def main(
    seed: RunSeed,
    params: ParamsFile = DEFAULT_PARAMS,
) -> None:
    """Read the attention at the query position for the probe sentence with every adjective.

    Reads: params winograd.maps (variant, x, y, adjectives) and winograd.adjectives;
    data/winograd/models/<maps.variant>/seed-<seed>/ (dvc.yaml passes the first of params
    `seeds`: the maps are one run's, not an average); data/winograd/<its task>.parquet.
    Writes: reports/tables/winograd/maps.json (per adjective: tokens, each block's
    head-averaged weights from the query to every position, the model's answer and the
    probability of the referent) and maps.tsv (the same weights, one line per adjective,
    block and position); reports/figures/winograd_maps.png (each block for maps.adjectives)
    and reports/figures/winograd_adjectives.png (every block, all eight adjectives).
    """
    cfg = load_params(params).winograd
    maps = cfg.maps
    path = paths.winograd_task(cfg.task_of(maps.variant))
    model = load_trained_model(paths.winograd_model_dir(maps.variant, seed)).model
    split = pair_split(path, maps.x, maps.y)
    sentences = probe_sentences(maps.x, maps.y, adjectives_of(cfg), split)
    rows = query_rows(model, sentences, read_vocabulary(path))
    record = maps_record(maps.variant, rows)
    paths.write_metrics(
        paths.WINOGRAD_MAPS, {**record, result_code.CODE: result_code.stamp("winograd-maps")}
    )
    table = maps_table(rows)
    with open(paths.WINOGRAD_MAPS_TABLE, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(table[0]), delimiter="\t")
        writer.writeheader()
        writer.writerows(table)
    draw_blocks(record, maps.adjectives, paths.figure("winograd_maps.png"))
    draw_adjectives(record, paths.figure("winograd_adjectives.png"))
    for row in rows:
        weights = " | ".join(
            f"block {b + 1}: {row.words[max(range(len(w)), key=w.__getitem__)]} {max(w):.2f}"
            for b, w in enumerate(row.weights)
        )
        print(f"too {row.sentence.adjective:6s} -> {row.answer:8s} strongest: {weights}")


if __name__ == "__main__":
    run_stage(main)
