"""Every entry of the experiment catalogue, walked: its rows, claims, figures, links, charts.

One test per promise the catalogue makes: its rows are params.yaml's variants and every
variant is some experiment's row or protocol variant; each protocol variant is its row
plus the protocol's overrides, measured as its experiment's rows; its claims are built by
rules that exist and read their own experiment's rows; its figures are drawn by a stage;
its protocol anchors and code modules exist; docs/catalogue.md describes the same
experiments; each chart draws trained runs, in the folder dvc.yaml plots; and the README's
table is the one the catalogue gives.
"""

import importlib.util
import re
from pathlib import Path
from typing import get_args

import pytest
import yaml
from dvc.repo import Repo

from attnlab import paths
from attnlab.catalogue import (
    CATALOGUE_FILE,
    CatalogueError,
    catalogue,
    experiment,
    experiments,
    experiments_of,
    measurements_for,
    parse_catalogue,
    winograd_task,
)
from attnlab.catalogue.entries import RuleName
from attnlab.catalogue.readme import BEGIN, END, experiments_table
from attnlab.charts import chart_runs
from attnlab.config.files import read_params_mapping
from attnlab.config.protocols import check_protocols
from attnlab.report.sections import LAYOUTS
from attnlab.verdicts import catalogue_claims
from attnlab.verdicts.claim_rules import RULES

CLAIMS = catalogue_claims()
ROOT = Path(__file__).resolve().parents[2]
PARAMS = read_params_mapping(ROOT / "params.yaml")
ALIASES: dict[str, str] = PARAMS["aliases"]
TRAINED = [*PARAMS["variants"], *PARAMS["winograd"]["variants"]]
DOCS = (ROOT / "docs/catalogue.md").read_text()
ENTRIES = list(experiments().items())


def _ids(entries):
    return [key for key, _ in entries]


@pytest.mark.parametrize(("key", "entry"), ENTRIES, ids=_ids(ENTRIES))
def test_every_row_is_a_variant_or_an_alias_of_params(key, entry):
    for name in entry.variants:
        assert name in TRAINED or name in ALIASES, f"{key}: {name} is not in params.yaml"
    assert len(set(entry.variants)) == len(entry.variants), key


def test_every_variant_and_alias_of_params_is_a_row_or_protocol_variant_of_an_experiment():
    protocols = {name for _, entry in ENTRIES for name in entry.protocol_variants}
    rows = {name for _, entry in ENTRIES for name in entry.variants}
    for name in (*TRAINED, *ALIASES):
        assert experiments_of(name), f"{name} belongs to no experiment of the catalogue"
        assert (name in rows) != (name in protocols), f"{name}: a row or a protocol's, not both"


def test_every_rule_the_catalogue_may_name_is_built_and_every_claim_is_decided():
    assert set(RULES) == set(get_args(RuleName))
    ids = [spec.id for _, entry in ENTRIES for spec in entry.claims]
    assert [claim.id for claim in CLAIMS] == ids  # the report decides exactly these


@pytest.mark.parametrize(("key", "entry"), ENTRIES, ids=_ids(ENTRIES))
def test_every_claim_reads_its_own_experiments_rows_or_probe(key, entry):
    own = {f"{name}/{kind}" for name in entry.variants for kind in ("eval", "train")}
    own |= {f"winograd/{name}" for name in entry.variants}
    own |= {entry.probe} - {None}
    if key == "sweeps":  # each study's check reads its best trial's runs and its variant's
        studies = PARAMS["sweeps"]["studies"].items()
        own |= {f"sweep-check/{name}/eval" for name, _ in studies}
        own |= {f"{study['variant']}/eval" for _, study in studies}
    for claim in (c for c in CLAIMS if c.experiment == key):
        for ref in claim.rule.needs:
            assert ref.source in own, f"{claim.id} reads {ref.source}, not a row of {key}"


@pytest.mark.parametrize("study", sorted(PARAMS["sweeps"]["studies"]))
def test_each_studys_check_is_a_claim_of_the_sweeps_against_its_variant_by_the_catalogues_beats(
    study,
):
    variant = PARAMS["sweeps"]["studies"][study]["variant"]
    check = next(c for c in experiment("sweeps").claims if c.id == f"sweeps.{study}")
    assert check.rule == "ratio_in"
    assert [(m.source, m.key) for m in check.of] == [
        (f"sweep-check/{study}/eval", "val/ppl"),
        (f"{variant}/eval", "val/ppl"),
    ]
    beats = [c for c in experiment("E02").claims if c.id in {"E02.6", "E02.7", "E02.8", "E02.9"}]
    thresholds = {(c.threshold.lo, c.threshold.hi, c.threshold.strict) for c in beats}
    assert thresholds == {(None, 1.0, True)}
    assert thresholds == {(check.threshold.lo, check.threshold.hi, check.threshold.strict)}


def _drawn_by_stages() -> set[str]:
    paths = set()
    for stage in Repo(str(ROOT)).index.stages:
        paths |= {str(out.def_path) for out in stage.outs}
    return paths


def test_every_figure_is_drawn_by_a_stage():
    drawn = _drawn_by_stages()
    for key, entry in ENTRIES:
        for figure in entry.figures:
            assert figure in drawn, f"{key}: no stage of dvc.yaml draws {figure}"


def _slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, dashes."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_protocol_link_and_code_module_exists():
    anchors = {_slug(h) for h in re.findall(r"^#+ (.+)$", DOCS, flags=re.M)}
    for key, entry in ENTRIES:
        path, anchor = entry.doc.split("#")
        assert path == "docs/catalogue.md", key
        assert anchor in anchors, f"{key}: docs/catalogue.md has no heading #{anchor}"
        for module in entry.code:
            assert importlib.util.find_spec(module) is not None, f"{key}: no module {module}"


def test_docs_and_catalogue_describe_the_same_experiments():
    headed = re.findall(r"^#{2,3} (E\d\d)(?: and (E\d\d))?:", DOCS, flags=re.M)
    listed = re.findall(r"^\| (E\d\d) \|", DOCS, flags=re.M)
    documented = {e for pair in headed for e in pair if e} | set(listed)
    documented |= {"P0"} if re.search(r"^## P0:", DOCS, flags=re.M) else set()
    documented |= {"sweeps"} if re.search(r"^## The sweeps$", DOCS, flags=re.M) else set()
    assert documented == set(experiments())


def test_dvc_yaml_draws_the_folder_the_charts_stage_writes():
    dvc = yaml.safe_load((ROOT / "dvc.yaml").read_text())
    assert dvc["plots"] == [{str(paths.CHARTS): {"x": "step", "template": "variants"}}]
    assert dvc["stages"]["charts"]["outs"] == [{str(paths.CHARTS): {"cache": False}}]


def test_every_chart_draws_trained_runs_of_its_curves_kind_in_a_file_of_its_own():
    names = [chart.name for chart in catalogue().charts]
    assert len(set(names)) == len(names)
    for chart in catalogue().charts:
        winograd = chart.curve == "winograd_loss"
        trained = PARAMS["winograd"]["variants"] if winograd else PARAMS["variants"]
        runs = chart_runs(chart, catalogue(), ALIASES).values()
        assert runs and all(run in trained for run in runs), chart.name


def test_the_readmes_table_is_the_catalogues():
    readme = (ROOT / "README.md").read_text()
    assert readme.count(BEGIN) == 1 and readme.count(END) == 1
    shown = BEGIN + readme.split(BEGIN, 1)[1].split(END, 1)[0] + END
    assert shown == experiments_table(experiments()), "run: python -m attnlab.catalogue"


def test_every_layout_of_its_own_lays_out_an_experiment_of_the_catalogue():
    assert set(LAYOUTS) <= set(experiments())


def test_measurements_and_tasks_follow_the_rows_not_the_names():
    assert measurements_for("positions-rope") == ("extrapolation",)
    assert measurements_for("norm-post-warmup") == ("grad_norms",)
    assert measurements_for("dk-block-128-unscaled") == ("score_stats",)
    assert measurements_for("ladder-layernorm") == ()
    # P0's block is measured for E08 through its alias row there.
    assert measurements_for("ladder-layernorm", *[a for a, v in ALIASES.items()]) == (
        "score_stats",
    )
    assert measurements_for("sweep-check-dk") == ()  # a sweep's check is no row
    assert {winograd_task(v) for v in experiment("E16").variants} == {"leaky"}
    assert {winograd_task(v) for v in experiment("E17").variants} == {"closed"}
    assert winograd_task("ladder-mlp") is None


def _raw() -> dict:
    return yaml.safe_load(CATALOGUE_FILE.read_text())


def _claim(raw: dict, key: str, index: int = 0) -> dict:
    return raw["experiments"][key]["claims"][index]


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda r: r["experiments"]["E13"].update(rowz=[]), r"experiments\.E13\.rowz"),
        (lambda r: _claim(r, "E13").update(rule="ratio"), r"experiments\.E13\.claims\.0\.rule"),
        (
            lambda r: _claim(r, "E13", 1)["threshold"].update(low=2.0),
            r"experiments\.E13\.claims\.1\.threshold\.low",
        ),
        (lambda r: _claim(r, "E13").update(id="E11.9"), "claim E11.9 is another's"),
        (lambda r: _claim(r, "E13", 4).update(parts=[]), "an all_of rule has parts"),
        (lambda r: r["experiments"].update(e13=r["experiments"].pop("E13")), r"experiments\.e13"),
        (lambda r: r["charts"][0].update(experiments=["E01"]), "names no experiment E01"),
        (lambda r: r["charts"].append(r["charts"][0]), "E02-train-loss is listed twice"),
        (lambda r: r["experiments"]["E08"].update(measure=["scores"]), r"E08\.measure\.0"),
        (
            lambda r: r["experiments"]["E09"].update(along=["grad_norms"]),
            "experiments.E09: along: grad_norms is not among measure",
        ),
    ],
)
def test_a_malformed_catalogue_is_refused_naming_the_key(edit, expected):
    raw = _raw()
    edit(raw)
    with pytest.raises(CatalogueError, match=expected):
        parse_catalogue(raw, "experiments.yaml")


def test_an_unknown_experiment_id_names_the_known_ones():
    with pytest.raises(CatalogueError, match="no experiment 'E01'.*P0, E02"):
        experiment("E01")


def _params():
    from attnlab.config import load_params

    return load_params(ROOT / "params.yaml")


def test_every_protocol_variant_is_measured_and_trained_as_its_experiments_rows():
    for key, entry in ENTRIES:
        for variant in entry.protocol_variants:
            assert variant in TRAINED, f"{key}: {variant} is not in params.yaml"
            assert experiments_of(variant) == (key,)
            assert measurements_for(variant) == tuple(entry.measure), variant
            assert winograd_task(variant) == entry.task, variant


def test_the_catalogues_protocols_match_the_resolved_params_variants():
    params = _params()
    check_protocols(experiments(), params.resolved_variant, params.aliases)  # no error


def _protocol(raw: dict, key: str = "E11", name: str | None = None) -> dict:
    protocols = raw["experiments"][key]["protocols"]
    return protocols[name] if name else next(iter(protocols.values()))


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        # The catalogue says dropout 0.2, params trains 0.1.
        (
            lambda r: _protocol(r)["overrides"]["model"].update(dropout=0.2),
            r"experiments\.E11\.protocols\.dropout-0\.1\.rows\.norm-pre: norm-pre-dropout10 "
            r"differs from norm-pre by model\.dropout=0\.1, not by exactly",
        ),
        # E09's two rows swapped: each differs from its row by the division too.
        (
            lambda r: _protocol(r, "E09")["rows"].update(
                {
                    "dk-1024-scaled": "dk-1024-unscaled-no-decay",
                    "dk-1024-unscaled": "dk-1024-scaled-no-decay",
                }
            ),
            r"rows\.dk-1024-scaled: dk-1024-unscaled-no-decay differs from dk-1024-scaled by "
            r"model\.scale_scores=False, train\.weight_decay=0\.0",
        ),
        (
            lambda r: _protocol(r, "E16")["rows"].update({"leaky-average": "leaky-average-tiny"}),
            r"E16\.protocols\.short\.rows\.leaky-average: params\.yaml has no variant "
            r"leaky-average-tiny",
        ),
    ],
)
def test_a_protocol_variant_that_is_not_its_row_plus_the_overrides_is_refused(edit, expected):
    raw = _raw()
    edit(raw)
    params = _params()
    with pytest.raises(ValueError, match=expected):
        check_protocols(parse_catalogue(raw, "x").experiments, params.resolved_variant, {})


def test_params_whose_protocol_variant_drifted_from_its_row_are_refused_naming_the_key():
    from attnlab.config.loader import parse_params
    from attnlab.errors import ParamsError

    raw = read_params_mapping(ROOT / "params.yaml")
    raw["variants"]["norm-pre"]["train"]["lr"] = 1.0e-3  # the row moves, its protocol does not
    with pytest.raises(ParamsError, match=r"rows\.norm-pre: norm-pre-dropout10 differs .*lr"):
        parse_params(raw)


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            lambda r: _protocol(r)["rows"].update({"norm-x": "norm-x-dropout10"}),
            r"experiments\.E11: protocols\.dropout-0\.1\.rows\.norm-x: not a row of this",
        ),
        (lambda r: _protocol(r)["rows"].pop("norm-post"), "maps no variant to row norm-post"),
        (
            lambda r: _protocol(r)["rows"].update({"norm-pre": "norm-post"}),
            r"rows\.norm-pre: a protocol's variant is no row",
        ),
        (
            lambda r: _protocol(r, "E17")["rows"].update({"closed-average": "leaky-average-short"}),
            "leaky-average-short is already a row or another protocol's variant",
        ),
        (lambda r: _protocol(r).update(overrides={}), "overrides at least one"),
        (
            lambda r: _protocol(r).update(keys={"grad_norm/": "x/"}),
            "either retrains .overrides, rows. or re-reads .keys.",
        ),
        (
            lambda r: _protocol(r, "E11", "weights-rms").update(keys={}),
            "overrides at least one",
        ),
    ],
)
def test_a_protocol_that_does_not_map_its_own_rows_is_refused_naming_the_key(edit, expected):
    raw = _raw()
    edit(raw)
    with pytest.raises(CatalogueError, match=expected):
        parse_catalogue(raw, "experiments.yaml")


def test_params_cut_to_a_few_variants_or_with_a_default_the_protocol_sets_still_load():
    from attnlab.config.loader import parse_params

    raw = read_params_mapping(ROOT / "params.yaml")
    # A default that already has the protocol's value: the two coincide there, no drift.
    raw["model"]["dropout"] = 0.1
    parse_params(raw)
    # Params cut to one row: its protocol variant is absent, so not run, not refused.
    raw["variants"] = {"norm-pre": raw["variants"]["norm-pre"]}
    raw["extra_seeds"].update(seeds=[], variants=[], winograd_variants=[])  # its rows are cut
    raw["aliases"] = {}
    raw["sweeps"]["studies"] = {}
    parse_params(raw)
