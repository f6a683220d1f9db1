"""What training each configuration once saves, from the committed record.

Serves the trained catalogue (E02, E08, E18): every alias of params.yaml (a row that is
the same run as a variant) used to be trained and evaluated as a variant of its own, once
per seed. Its cost is read from the record: the alias's own runs where the record still
holds them (``reports/metrics/<alias>/train.json``, or ``.../seed-<s>/train.json``), else
its variant's, whose run it now reads. Wall seconds of ``train.json`` and ``eval.json``,
per seed (the mean over the seeds recorded), then times the number of ``seeds``; next to
them the whole record's training seconds per seed, for the share saved. The record's
runs shared the machine with other work, so equal configurations differ in wall time.

    python benchmarks/alias_savings.py
"""

from __future__ import annotations

import json
from pathlib import Path
from statistics import mean

from attnlab.config.files import read_params_mapping

ROOT = Path(__file__).resolve().parents[1]
METRICS = ROOT / "reports" / "metrics"


def recorded_seconds(run: str, kind: str) -> float | None:
    """Mean ``wall_s`` of ``<run>``'s ``<kind>.json`` over its recorded seeds, if any."""
    files = [METRICS / run / f"{kind}.json", *sorted((METRICS / run).glob(f"seed-*/{kind}.json"))]
    seconds = [json.loads(f.read_text())["wall_s"] for f in files if f.is_file()]
    return mean(seconds) if seconds else None


def main() -> None:
    """Print each alias's cost per seed, the total per seed and for every seed of params."""
    params = read_params_mapping(ROOT / "params.yaml")
    aliases, seeds = params["aliases"], len(params["seeds"])
    header = ("alias", "reads", "own runs: train s", "eval s", "variant: train s")
    print("{:<20} {:<18} {:>18} {:>7} {:>17}".format(*header))
    saved = {"train": 0.0, "evaluate": 0.0, "at the variant's speed": 0.0}
    for alias, variant in aliases.items():
        own, variant_s = recorded_seconds(alias, "train"), recorded_seconds(variant, "train")
        source = alias if own is not None else variant
        evaluation = recorded_seconds(source, "eval") or 0.0
        saved["train"] += own if own is not None else variant_s or 0.0
        saved["evaluate"] += evaluation
        saved["at the variant's speed"] += variant_s or 0.0
        shown = f"{own:,.0f}" if own is not None else "not recorded"
        print(f"{alias:<20} {variant:<18} {shown:>18} {evaluation:>7.1f} {variant_s or 0:>17,.0f}")
    stages = 2 * len(aliases)
    for label, factor in (("per seed", 1), (f"for {seeds} seeds", seeds)):
        train, speed = saved["train"] * factor, saved["at the variant's speed"] * factor
        print(
            f"saved {label}: {train:,.0f} s training ({train / 3600:.2f} h; {speed:,.0f} s at "
            f"the variant's own wall time), {saved['evaluate'] * factor:,.1f} s evaluation, "
            f"{stages * factor} stages"
        )
    catalogue = sum(recorded_seconds(v, "train") or 0.0 for v in (*params["variants"], *aliases))
    if catalogue:
        print(
            f"the record's training per seed, the aliases' own runs included: {catalogue:,.0f} s;"
            f" saved {saved['train'] / catalogue:.1%}"
        )


if __name__ == "__main__":
    main()
