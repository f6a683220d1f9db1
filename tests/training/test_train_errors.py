"""Every way the train stage cannot run ends as one ``error:`` line with exit 2.

Before, each of these was a raw traceback with exit 1.
"""

import pytest
import torch
from train_helpers import shrunk_params

from attnlab.data.bpe import load_tokenizer
from attnlab.errors import AttnlabError
from attnlab.runs.manifest import write_listed

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
