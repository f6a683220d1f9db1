"""Every way the train stage cannot run ends as one ``error:`` line with exit 2.

Before, each of these was a raw traceback with exit 1.
"""

import resource
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from train_helpers import shrunk_params

from attnlab.config import parse_params
from attnlab.data.bpe import load_tokenizer
from attnlab.errors import AttnlabError
from attnlab.runs.manifest import write_listed
from attnlab.training import TrainJob
from attnlab.training.capacity import memory_limits, needed_bytes

MACHINE, CGROUP = "the machine's memory", "the cgroup's memory limit"

VARIANT = "ladder-mlp"


def _one_error_line(done) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    return done.stderr.strip().splitlines()[-1]


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has the GPU asked for")
def test_a_gpu_asked_for_on_a_machine_without_one_is_named(stage_project):
    project = stage_project("gpu", shrunk_params(trainer={"accelerator": "gpu"}))
    assert _one_error_line(project.run(VARIANT)).startswith("error: trainer: accelerator='gpu' ")


def test_a_context_longer_than_the_validation_split_is_named(stage_project):
    project = stage_project("long", shrunk_params(model={"block_size": 20_000}))
    line = _one_error_line(project.run(VARIANT))
    assert line.startswith("error: data/tokens/val.parquet: ") and "block_size" in line


def test_tokens_of_another_vocabulary_are_named(stage_project):
    params = shrunk_params()
    params["bpe"]["vocab_size"] = 512  # the token files hold ids up to 1023
    line = _one_error_line(stage_project("vocab", params).run(VARIANT))
    assert line.startswith("error: data/tokens/train.parquet: holds token id ")
    assert "outside the vocabulary of 512 (bpe.vocab_size)" in line


def test_a_corrupt_token_file_is_named(stage_project):
    project = stage_project("corrupt", shrunk_params())
    val = project.root / "data" / "tokens" / "val.parquet"
    val.unlink()  # the shared fixture's symlink: replace it, not what it points to
    val.write_bytes(b"PAR1 not really" * 50)
    line = _one_error_line(project.run(VARIANT))
    assert line.startswith("error: data/tokens/val.parquet: not a readable token file")


def test_a_garbage_tokenizer_is_named(tmp_path):
    write_listed(tmp_path, {"tokenizer.json": b"{ not json"})  # listed: its hash holds
    path = tmp_path / "tokenizer.json"
    with pytest.raises(AttnlabError, match=f"{path}: not a readable tokenizer"):
        load_tokenizer(path)


@pytest.mark.parametrize(
    ("sections", "named"),
    [
        ({"model": {"d_model": 1 << 26}}, "error: model.d_model 67108864, model.n_layer 1, "),
        ({"train": {"batch_size": 10**9}}, ", train.batch_size 1000000000: training needs "),
    ],
)
def test_a_run_too_big_for_memory_is_refused_before_allocating(stage_project, sections, named):
    # Before, torch's allocator failed with a traceback, or the machine began to swap.
    line = _one_error_line(stage_project("big", shrunk_params(**sections)).run(VARIANT))
    assert named in line and "GiB of memory is available" in line


def _address_space(limit: int) -> Callable[[], None]:
    return lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def test_a_run_too_big_for_the_process_s_address_space_is_refused_before_allocating(
    stage_project,
):
    # The case: under `ulimit -v`, a model the machine's memory could hold ended in
    # torch's "DefaultCPUAllocator: can't allocate memory" traceback, exit 1. This one
    # needs some 6.6 GB: within this machine's free memory, not within 6 GiB of address
    # space, most of which Python and torch map as they load.
    params = shrunk_params(model={"d_model": 200_000})
    model = TrainJob.from_params(parse_params(params), "ladder-no-context").variant.model
    assert 6 << 30 < needed_bytes(model, 8, training=True) < memory_limits()[MACHINE]
    project = stage_project("limited", params)
    done = subprocess.run(
        project.command("ladder-no-context"),
        cwd=project.root,
        env=project.env,
        capture_output=True,
        text=True,
        timeout=600,
        preexec_fn=_address_space(6 << 30),
    )
    line = _one_error_line(done)
    assert line.startswith("error: model.d_model 200000, model.n_layer 1, train.batch_size 8: ")
    assert line.endswith(
        "memory is available (under the address space (ulimit -v)); make the model or "
        "the batch smaller"
    )


def test_a_cgroup_memory_limit_counts_as_the_memory_left_under_it(tmp_path):
    # The files as the kernel lays them out, for this process's own cgroups (v2 and v1).
    for entry in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = entry.split(":", 2)
        v1 = "memory" in controllers.split(",")
        if controllers and not v1:
            continue
        folder = tmp_path / ("memory" if v1 else "") / path.lstrip("/")
        folder.mkdir(parents=True, exist_ok=True)
        limit, usage = ("memory.limit_in_bytes", "memory.usage_in_bytes") if v1 else (
            "memory.max", "memory.current")  # fmt: skip
        (folder / limit).write_text(f"{3 << 30}\n")
        (folder / usage).write_text(f"{1 << 30}\n")
    assert memory_limits(tmp_path)[CGROUP] == 2 << 30
    for unlimited in tmp_path.rglob("memory.max"):
        unlimited.write_text("max\n")
    for unlimited in tmp_path.rglob("memory.limit_in_bytes"):
        unlimited.write_text("9223372036854771712\n")
    assert CGROUP not in memory_limits(tmp_path)
