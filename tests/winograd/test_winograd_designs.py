"""The held-out design knob: defaults unchanged, `nouns` never trained, bad values named."""

import copy
import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from attnlab.config import load_params, parse_params
from attnlab.config.files import params_files, read_params_mapping, write_params_mapping
from attnlab.errors import ParamsError
from attnlab.winograd.from_params import adjectives_of, build_task
from attnlab.winograd.sentences import WinogradTask, closed_task, leaky_task

ROOT = Path(__file__).resolve().parents[2]
PARAMS = read_params_mapping(ROOT / "params.yaml")
# sha256 of every sentence (words and split) of each task under winograd.yaml's default
# designs (leaky: pairs, closed: orientation), computed by the generator as it was before
# the design became a knob: the knob's defaults must give the same sentences.
BEFORE = {
    (1337, "leaky"): "7eecf84db63f630f4a2df153ab184036ab31b0225e8dcb2f9c030f3291f5bea9",
    (1337, "closed"): "48858e7bec09da4290fd03ae37e9e5ded96ea7433a3813516bd32fefdf96934e",
    (0, "leaky"): "25ff0ea45d9ad2be58f2e9342de75ad0fda73cdb77e595dbf2cdfcc218b99026",
    (0, "closed"): "dcf779c7527293e092b887a66fdc59ff0ac359936c04bc39118ac4848a2c4477",
    (7, "leaky"): "db88188035abd175a353ecb58701740189d4b1e539a0a213c38b33563bcb531c",
    (7, "closed"): "22f807cd77d971294132c1d5d9643027e9beb2a8b27e6a969d53f286ff5adc13",
}


def _digest(task: WinogradTask) -> str:
    lines = [" ".join(task.vocabulary)]
    lines += [f"{s.x} {s.y} {s.adjective} {s.role} {s.split}" for s in task.sentences]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def _winograd(edit=None):
    params = copy.deepcopy(PARAMS)
    if edit is not None:
        edit(params["winograd"])
    return parse_params(params).winograd


def _design(task: str, design: str, share: float = 0.25):
    def edit(winograd: dict) -> None:
        winograd[task]["held_out"] = {"design": design, "share": share}

    return edit


@pytest.mark.parametrize(("seed", "task"), sorted(BEFORE))
def test_the_default_designs_give_the_sentences_of_before(seed, task):
    cfg = load_params(ROOT / "params.yaml").winograd
    assert (cfg.leaky.held_out.design, cfg.closed.held_out.design) == ("pairs", "orientation")
    assert _digest(build_task(cfg, task, seed)) == BEFORE[seed, task]


def test_the_library_defaults_are_the_params_defaults():
    cfg = load_params(ROOT / "params.yaml").winograd
    adjectives = adjectives_of(cfg)
    leaky = leaky_task(cfg.leaky.animals, cfg.leaky.places, adjectives, 0.25, 1337)
    closed = closed_task(cfg.closed.nouns, adjectives, 0.25, 1337)
    assert _digest(leaky) == BEFORE[1337, "leaky"] and _digest(closed) == BEFORE[1337, "closed"]


@pytest.mark.parametrize("task", ["leaky", "closed"])
def test_held_out_nouns_appear_in_no_training_sentence(task):
    cfg = _winograd(_design(task, "nouns"))
    built = build_task(cfg, task, 1337)
    trained = {word for s in built.split("train") for word in s.words}
    unseen = set(cfg.nouns(task)) - trained
    # A quarter of each pool: 2 of the 8 animals and 2 of the 8 places; 4 of the 16 nouns.
    assert len(unseen) == 4
    held = built.split("held_out")
    assert held and all({s.x, s.y} & unseen for s in held)
    assert len(built.sentences) == len(held) + len(built.split("train"))
    if task == "leaky":
        assert len(unseen & set(cfg.leaky.animals)) == len(unseen & set(cfg.leaky.places)) == 2
    assert build_task(cfg, task, 1337) == built and build_task(cfg, task, 8) != built


def test_closed_pairs_design_holds_out_both_orientations_and_keeps_every_noun():
    cfg = _winograd(_design("closed", "pairs"))
    built = build_task(cfg, "closed", 1337)
    train, held = built.pairs("train"), built.pairs("held_out")
    assert len(held) == 2 * 30 and all((y, x) in held for x, y in held)
    assert train.isdisjoint(held)
    nouns = set(cfg.closed.nouns)
    assert {x for x, _ in train} == {y for _, y in train} == nouns


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (_design("leaky", "orientation"), "winograd.leaky.held_out.design: Input should be"),
        (_design("closed", "words"), "winograd.closed.held_out.design: Input should be"),
        (_design("closed", "nouns", 0.0), "winograd.closed.held_out.share:"),
        (_design("leaky", "nouns", 0.95), "winograd.leaky: held_out.share: holding out 8 of 8"),
        (_design("closed", "nouns", 0.95), "winograd.closed: held_out.share: holding out 15"),
        (lambda w: w["leaky"].update(held_out_share=0.25), "winograd.leaky.held_out_share"),
        (lambda w: w["closed"]["held_out"].pop("design"), "winograd.closed.held_out.design"),
    ],
)
def test_a_bad_design_is_refused_naming_its_key(edit, expected):
    with pytest.raises(ParamsError) as caught:
        _winograd(edit)
    assert expected in str(caught.value)


def _run_data_stage(project: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "attnlab.stages.winograd_data"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_data_stage_refuses_a_bad_design_before_any_work(tmp_path):
    params = copy.deepcopy(PARAMS)
    _design("leaky", "orientation")(params["winograd"])
    write_params_mapping(tmp_path / "params.yaml", params)
    done = _run_data_stage(tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: ") and "winograd.leaky.held_out.design" in done.stderr
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == sorted(p.name for p in params_files(tmp_path / "params.yaml"))


def test_a_held_out_share_no_split_fits_is_refused_naming_it_and_writes_nothing(tmp_path):
    # Whether every noun can stay in training is only known once the pairs are drawn.
    params = copy.deepcopy(PARAMS)
    params["winograd"]["leaky"]["held_out"] = {"design": "pairs", "share": 0.9}
    write_params_mapping(tmp_path / "params.yaml", params)
    done = _run_data_stage(tmp_path)
    assert done.returncode == 2, done.stderr
    expected = "error: winograd.leaky.held_out: cannot hold out 58 pairs and keep every noun"
    assert done.stderr.startswith(expected), done.stderr
    assert "Traceback" not in done.stderr
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == sorted(p.name for p in params_files(tmp_path / "params.yaml"))
