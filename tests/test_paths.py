"""attnlab.paths names exactly the files dvc.yaml declares, and writes metrics as the record.

Every stage's outputs (``outs``, ``metrics`` and ``plots``) and the data files it reads are
computed from :mod:`attnlab.paths` for the stage's own arguments (its variant, seed or
study, read from its resolved ``cmd``) and compared with what DVC resolved from
``dvc.yaml``. A metrics file written and read back is the same record, and its bytes are
those of the committed record, so moving every stage to one writer changed no file.
"""

import json
import math
import shlex
from functools import cache
from pathlib import Path

import pytest
from dvc.repo import Repo

from attnlab import paths
from attnlab.config.extra_seeds import EXTRA
from attnlab.config.files import read_params_mapping
from attnlab.errors import AttnlabError

ROOT = Path(__file__).resolve().parents[1]


def _run_outputs(folders: tuple[Path, Path, Path]) -> set[Path]:
    """What ``train`` and ``sweep-check`` write for one run."""
    model, metrics, curves = folders
    return {
        model,
        metrics / paths.TRAIN_METRICS,
        paths.curve(curves, paths.TRAIN_LOSS),
        paths.curve(curves, paths.VAL_PPL),
    }


def _expected(base: str, args: dict[str, str], maps_variant: str) -> tuple[set[Path], set[Path]]:
    """The (outputs, data inputs) of stage ``base`` run with ``args``, from attnlab.paths."""
    variant, study = args.get("--variant", ""), args.get("--study", "")
    seed = int(args.get("--seed", 0))
    tokens = {paths.TRAIN_TOKENS, paths.VAL_TOKENS, paths.TOKENIZER}
    tasks = {paths.winograd_task("leaky"), paths.winograd_task("closed")}
    table = {
        "download": ({paths.RAW_CORPUS}, set()),
        "bpe": ({paths.TOKENIZER, paths.TOKENIZER_MANIFEST}, {paths.RAW_CORPUS}),
        "tokenize": ({paths.TOKENS, paths.CORPUS_METRICS}, {paths.RAW_CORPUS, paths.TOKENIZER}),
        "probes": (
            {
                paths.PROBE_METRICS,
                paths.PROBE_TABLES,
                paths.figure("e06_effective_tokens.png"),
                paths.figure("e07_frozen_fraction.png"),
            },
            set(),
        ),
        "cost": ({paths.COST_METRICS, paths.COST_TABLE, paths.figure("e14_cost.png")}, set()),
        "train": (
            _run_outputs(paths.run_folders(variant, seed)),
            tokens,
        ),
        "evaluate": (
            {paths.eval_metrics(variant, seed)},
            tokens | {paths.model_dir(variant, seed)},
        ),
        "charts": ({paths.CHARTS}, {paths.CURVES, paths.METRICS}),
        "report": (
            {paths.REPORT_INDEX, paths.REPORT_MARKDOWN, paths.DEMO, paths.SUMMARY, paths.HEADLINE},
            {paths.METRICS, paths.CURVES, paths.TABLES, paths.FIGURES, paths.SWEEPS},
        ),
        "winograd-data": (tasks | {paths.WINOGRAD_DATA_METRICS}, set()),
        "winograd-train": (
            {
                paths.winograd_model_dir(variant, seed),
                paths.winograd_train_metrics(variant, seed),
                paths.winograd_curve(variant, seed),
                paths.winograd_accuracy_curve(variant, seed),
            },
            tasks,
        ),
        "winograd-score": (
            {paths.winograd_score_metrics(variant, seed)},
            tasks | {paths.winograd_model_dir(variant, seed)},
        ),
        "winograd-maps": (
            {
                paths.WINOGRAD_MAPS,
                paths.WINOGRAD_MAPS_TABLE,
                paths.figure("winograd_maps.png"),
                paths.figure("winograd_adjectives.png"),
            },
            tasks | {paths.winograd_model_dir(maps_variant, seed)},
        ),
        "sweep": (
            {
                paths.study_journal(study),
                paths.sweep_folder(study) / paths.TRIALS,
                paths.best_trial(study),
                paths.sweep_folder(study) / paths.SWEEP_FIGURES,
            },
            tokens,
        ),
        "sweep-check": (
            _run_outputs(paths.check_folders(study, seed))
            | {paths.check_folders(study, seed)[1] / paths.EVAL_METRICS},
            tokens | {paths.best_trial(study)},
        ),
    }
    return table[base]


@cache
def _stages() -> list:
    return list(Repo(str(ROOT)).index.stages)


def _maps_variant() -> str:

    return read_params_mapping(ROOT / "params.yaml")["winograd"]["maps"]["variant"]


@pytest.mark.parametrize("stage", _stages(), ids=lambda s: s.addressing)
def test_every_file_a_stage_declares_is_named_by_the_paths_module(stage):
    words = shlex.split(stage.cmd)[2:]
    args = dict(zip(words[::2], words[1::2], strict=True))
    family = stage.addressing.split("@")[0].removesuffix(EXTRA)  # train-extra writes as train
    outputs, inputs = _expected(family, args, _maps_variant())
    assert {Path(str(out.def_path)) for out in stage.outs} == outputs
    data = {Path(str(dep.def_path)) for dep in stage.deps}
    data = {dep for dep in data if dep.parts[0] in (paths.DATA.name, paths.REPORTS.name)}
    assert data == inputs


def test_every_committed_metrics_file_written_again_is_byte_for_byte_the_same(tmp_path):
    committed = sorted((ROOT / "reports").glob("**/*.json"))
    assert len(committed) > 10  # the record is there: the test compares something
    again = tmp_path / "again.json"
    differ = []
    for path in committed:
        paths.write_metrics(again, paths.read_metrics(path))
        if again.read_bytes() != path.read_bytes():
            differ.append(str(path.relative_to(ROOT)))
    assert differ == []


def test_a_record_reads_back_as_written_in_its_own_key_order(tmp_path):
    record = {"val/ppl": 12.5, "steps": 3, "a": [1, 2.5], "nested": {"z": 1, "b": "x"}}
    path = tmp_path / "deep" / "eval.json"
    paths.write_metrics(path, record)
    assert paths.read_metrics(path) == record
    assert list(paths.read_metrics(path)) == list(record)  # not sorted: the record's order
    assert path.read_text().endswith("}\n") and '\n  "val/ppl": 12.5,' in path.read_text()


def test_a_non_finite_number_is_written_as_null_which_dvc_can_read(tmp_path):
    path = tmp_path / "m.json"
    paths.write_metrics(path, {"x": math.nan, "deep": {"y": [math.inf, 1.0]}})
    assert json.loads(path.read_text()) == {"x": None, "deep": {"y": [None, 1.0]}}


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "missing"), ("{not json", "unreadable"), ("[1, 2]", "expected a JSON object")],
)
def test_a_bad_metrics_file_is_an_error_naming_it(tmp_path, content, message):
    path = tmp_path / "best.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(AttnlabError, match=rf"{path}: .*{message}"):
        paths.read_metrics(path)
