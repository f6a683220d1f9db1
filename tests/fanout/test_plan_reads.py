"""The fan-out reads DVC's project once per plan and plans what DVC's own calls would.

Targets are resolved against the stages already read, stages are asked DVC's
``Stage.changed`` and params files are parsed once a read: each is checked here against
the DVC calls it stands for (``Repo.stage.collect``, ``Repo.status``), on a real project.
"""

import contextlib
import shutil
from pathlib import Path

import yaml
from dvc.repo import Repo
from dvc.utils import serialize

from attnlab.fanout.dvc_graph import read_graph, yaml_parsed_once
from attnlab.fanout.phases import first_plan
from attnlab.fanout.plan import read_plan

# A group, one of its stages, a plain stage, and a dvc.yaml address left to DVC.
TARGETS = ("evaluate", "train@ladder-mlp-1337", "tokenize", "dvc.yaml:probes")


def _dvc(root, ask):
    with contextlib.chdir(root), Repo(str(root)) as repo:
        return ask(repo)


def test_targets_resolve_to_the_stages_dvc_collects_with_their_upstream(dvc_project):
    def ours(graph):
        return {t: {stage.addressing for stage in graph.upstream_of([t])} for t in TARGETS}

    def dvcs(repo):
        collected = {t: repo.stage.collect(t, with_deps=True) for t in TARGETS}
        return {t: {stage.addressing for stage in stages} for t, stages in collected.items()}

    assert read_graph(dvc_project.root, ours) == _dvc(dvc_project.root, dvcs)


def test_the_plan_holds_what_dvc_status_finds_stale_and_what_follows(tokenized_project):
    root = tokenized_project.root  # the data stages recorded, no other stage
    stale = _dvc(root, lambda repo: set(repo.status(targets=["evaluate"], with_deps=True)))
    assert stale and not stale & {"download", "bpe", "tokenize"}
    assert set(read_plan(root, ["evaluate"]).order) == stale
    assert read_plan(root, ["tokenize"]).order == ()
    inputs, plan = first_plan(root, ["evaluate"], allow_missing=True)
    assert inputs.order == () and plan is not None  # the tokens are here


def test_a_fresh_project_plans_its_absent_inputs_first(dvc_project):
    inputs, plan = first_plan(dvc_project.root, (), allow_missing=True)
    assert plan is None  # planned once the inputs exist
    assert {"download", "bpe", "tokenize", "winograd-data"} <= set(inputs.order)


def test_each_params_reader_gets_its_own_copy_and_dvcs_loaders_are_put_back(dvc_project):
    params = dvc_project.root / "params.yaml"
    before = dict(serialize.LOADERS)

    def read_twice(graph):
        first = serialize.load_path(str(params), graph.repo.fs)
        first["seed"] = "changed by a reader"
        return first, serialize.load_path(str(params), graph.repo.fs)

    first, second = read_graph(dvc_project.root, read_twice)
    assert second == serialize.load_yaml(params) != first
    assert dict(serialize.LOADERS) == before


def test_stage_files_parse_once_per_text_and_each_reader_gets_its_own_copy(dvc_project):
    # dvc exp save resolves each of its targets against a fresh parse of dvc.lock: 2 s each
    # for the record's, half an hour for a quick pass's experiment.
    from dvc.utils import strictyaml

    lock = dvc_project.root / "dvc.yaml"  # a stage file DVC parses with strictyaml
    parse, calls = strictyaml.parse_yaml, []

    def counted(text, path, typ="safe"):
        calls.append(path)
        return parse(text, path, typ=typ)

    strictyaml.parse_yaml = counted
    try:
        with yaml_parsed_once():
            first, _ = strictyaml.load(str(lock))
            first["stages"] = "changed by a reader"
            second, _ = strictyaml.load(str(lock))
            lock.write_text(lock.read_text() + "\n# edited\n")
            third, _ = strictyaml.load(str(lock))
        assert strictyaml.parse_yaml is counted  # put back
    finally:
        strictyaml.parse_yaml = parse
    assert second == third == parse(lock.read_text(), str(lock)) != first
    assert len(calls) == 2  # once per text: the edit is read again


def test_an_output_here_whose_hash_is_not_its_lock_entry_s_is_stale_not_absent(
    tiny_dvc_project: Path, tmp_path: Path
):
    # The case: a model's md5 edited in dvc.lock; DVC's --allow-missing read the
    # output as "not in cache", absent data, and the plan said nothing was stale while
    # the workspace held a model of another hash.
    root = tmp_path / "edited"
    shutil.copytree(tiny_dvc_project, root)
    lock = root / "dvc.lock"
    recorded = yaml.safe_load(lock.read_text())["stages"]["count@alpha-1"]["outs"][0]["md5"]
    lock.write_text(lock.read_text().replace(recorded, "abcdef0123456789" * 2))
    plan = read_plan(root, ["count@alpha-1"], allow_missing=True)
    assert plan.order == ("count@alpha-1",)
    assert plan.out_of_lock == {"count@alpha-1"}  # run as plain `dvc repro`: DVC reruns it
    # The same entry with its output absent (a fresh clone) is missing data, as in DVC.
    (root / "out" / "alpha-1.txt").unlink()
    assert read_plan(root, ["count@alpha-1"], allow_missing=True).order == ()
