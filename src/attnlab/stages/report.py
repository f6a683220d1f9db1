"""Stage ``report``: every experiment's tables, figures and claim verdicts, and the demo."""

import dataclasses
from typing import Any

from attnlab import paths, result_code
from attnlab.config import Params, catalogue_choice, load_params
from attnlab.files import write_together
from attnlab.report import Report, ReportInputs, build_report, load_results
from attnlab.report.headline import as_measured
from attnlab.stages.command import DEFAULT_PARAMS, ParamsFile, run_stage
from attnlab.training.configurations import expected_runs
from attnlab.verdicts import HOLDS, INCONCLUSIVE, NOT_RUN, STALE, decide

SHOWN_STALE = 10  # records left out named on the terminal; the page names every one


def report_params(loaded: Params) -> dict[str, Any]:
    """The params the report reads, as :class:`ReportInputs` takes them.

    ``variants``: each variant's resolved ``model`` and ``train``, the protocol the
    layout and the sweep answers quote (E11's depth, steps and warmup, E13's context).
    """
    return {
        "seed": loaded.seed,
        "budget": {"scale": loaded.budget.scale},
        "wandb": loaded.runtime.wandb.model_dump(include={"entity", "project"}),
        "sweeps": {
            key: {
                "variant": study.variant,
                "choice": catalogue_choice(study, loaded.variant(study.variant)),
                "references": study.references,
            }
            for key, study in loaded.sweeps.studies.items()
        },
        "variants": {name: recipe(loaded, name) for name in loaded.variants},
    }


def recipe(loaded: Params, name: str) -> dict[str, Any]:
    """Variant ``name``'s resolved model and training recipe, as plain values."""
    variant = loaded.variant(name)
    return {"model": dataclasses.asdict(variant.model), "train": variant.train.model_dump()}


def report_inputs(loaded: Params) -> ReportInputs:
    """What the report reads: the project's files under ``reports/``, judged by ``loaded``."""
    return ReportInputs(
        metrics=paths.METRICS,
        curves=paths.CURVES,
        tables=paths.TABLES,
        figures=paths.FIGURES,
        sweeps=paths.SWEEPS,
        params=report_params(loaded),
        aliases=dict(loaded.aliases),
        variants=tuple(loaded.variants),
        configurations=expected_runs(loaded),
        code={stage: result_code.code_digests(stage) for stage in result_code.RECORDED},
        seeds=expected_seeds(loaded),
    )


def report_of(inputs: ReportInputs) -> Report:
    """The report of the record under ``inputs``: read once, decided once, laid out."""
    results = load_results(inputs)
    measured = load_results(as_measured(inputs))  # the headline's runs with no current record
    return build_report(results, decide(results), inputs.code, measured=measured)


def expected_seeds(loaded: Params) -> dict[str, tuple[int, ...]]:
    """Per run the params expect (every variant, every Winograd variant), its seeds."""
    names = [*loaded.variants, *loaded.winograd.variants]
    return {name: tuple(loaded.seeds_of(name)) for name in names}


def main(
    params: ParamsFile = DEFAULT_PARAMS,
) -> None:
    """Render the report from whatever the pipeline has measured so far.

    Reads: params seed and budget.scale (shown as the protocol where a metrics file does
    not record them); each study of sweeps.studies, its variant resolved from variants,
    model and train (the catalogue's choice the sweep section answers against), and its
    references (the story's own choices, run as fixed trials); every variant resolved from
    variants, model and train (the protocol E11's and E13's tables quote, and E11's warmup
    the warmup study's rescue is asked at); wandb
    (entity and project: the trials' W&B links); aliases (a row that reads its variant's
    files, said so in its experiment's protocol); seeds, budget, model, train, trainer,
    bpe.vocab_size and evaluate (the configuration each run's train.json and eval.json
    must state: a run that states another is left out, and named as stale on the page
    and here); the library code of every stage that writes a record (each record must
    state the code the checkout holds, attnlab.result_code, or it is left out as stale,
    with every claim that reads it); seeds and extra_seeds (the runs each claim awaits);
    everything under reports/metrics,
    reports/curves, reports/tables, reports/figures and reports/sweeps (a missing file or
    folder means "not run").
    Writes: reports/index.html (one self-contained page: CSS and figures inline, opens
    offline), reports/REPORT.md (the same tables and verdicts in Markdown) and
    reports/demo.html (the browser demo, with the Winograd maps embedded) and
    reports/headline.json (the metrics `dvc exp show` compares: per variant the mean over
    seeds of val/ppl and val/bpb and its n, Winograd accuracy, each study's best val/ppl,
    and the claim tally) and reports/summary/<source>.json (every seeded measurement's
    mean, std, n and per-seed values, laid out like reports/metrics without the seeds).
    """
    report = report_of(report_inputs(load_params(params)))
    for line in report.stale[:SHOWN_STALE]:
        print(f"report: left out as stale: {line}")
    if len(report.stale) > SHOWN_STALE:
        more = len(report.stale) - SHOWN_STALE
        print(f"report: and {more} more left out as stale (REPORT.md: The record's state)")
    # One set: a kill or a full disk leaves the last report whole, never pages of two.
    pages = {
        paths.REPORT_INDEX: report.index_html,
        paths.REPORT_MARKDOWN: report.markdown,
        paths.DEMO: report.demo_html,
        paths.HEADLINE: paths.metrics_text(report.headline),
    }
    # The summary folder holds this report's sources only (it exists even with none).
    summary = {f"{s}.json": paths.metrics_text(r).encode() for s, r in report.summary.items()}
    write_together(
        {path: text.encode("utf-8") for path, text in pages.items()}, {paths.SUMMARY: summary}
    )
    decided = [v for v in report.verdicts if v.status not in (NOT_RUN, INCONCLUSIVE, STALE)]
    held = sum(v.status == HOLDS for v in decided)
    pending = sum(v.status == INCONCLUSIVE for v in report.verdicts)
    stale = sum(v.status == STALE for v in report.verdicts)
    not_run = len(report.verdicts) - len(decided) - pending - stale
    print(
        f"report: {len(report.verdicts)} claims, {len(decided)} decided ({held} hold), "
        f"{pending} inconclusive, {stale} stale, {not_run} not run -> {paths.REPORT_INDEX}"
    )


if __name__ == "__main__":
    run_stage(main)
