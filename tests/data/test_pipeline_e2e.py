"""The real ``dvc repro`` of the data stages in a throw-away clone (issue: foundation)."""

import hashlib
import json
import resource
import signal
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

pytestmark = pytest.mark.slow


def test_repro_then_nothing_then_only_the_bpe_knob_reruns(data_stages_run, tokenized_project):
    # The first repro, in a fresh project, is the session's one (the later tests copy its
    # project); this test checks it, then goes on in its own copy.
    assert data_stages_run.ran == ["download", "bpe", "tokenize"]
    dvc_project = tokenized_project
    root = dvc_project.root
    corpus = json.loads((root / "reports/metrics/corpus.json").read_text())
    assert corpus["train_tokens"] + corpus["val_tokens"] == corpus["tokens"]
    assert pq.read_metadata(root / "data/tokens/train.parquet").num_rows == corpus["train_tokens"]

    again = dvc_project.dvc("repro", "tokenize")
    assert dvc_project.ran_stages(again.stdout) == []

    def smaller_vocabulary(params: dict) -> None:
        params["bpe"]["vocab_size"] = 512

    # (tests/config runs the same edit as `dvc exp run -S`, on the download stage.)
    dvc_project.edit_params(smaller_vocabulary, commit=False)
    knob = dvc_project.dvc("repro", "tokenize")
    assert dvc_project.ran_stages(knob.stdout) == ["bpe", "tokenize"]
    assert json.loads((root / "reports/metrics/corpus.json").read_text())["vocab_size"] == 512

    # A record, not a DVC metric: `dvc exp show` compares the report's headline alone.
    shown = dvc_project.dvc("metrics", "show", "--json")
    assert "chars_per_token" not in shown.stdout


def test_a_corrupt_mirror_is_refused_and_nothing_lands(dvc_project, tmp_path, corpus_mirror):
    bad = tmp_path / "corrupt.txt"
    data = bytearray(corpus_mirror.read_bytes())
    data[1000] ^= 0x01
    bad.write_bytes(bytes(data))
    dvc_project.env["ATTNLAB_CORPUS_MIRROR"] = str(bad)
    failed = dvc_project.dvc("repro", "download", check=False)
    assert failed.returncode != 0
    message = failed.stdout + failed.stderr
    assert "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed" in message
    assert hashlib.sha256(bytes(data)).hexdigest() in message
    assert "Traceback" not in message
    assert not (dvc_project.root / "data/raw/input.txt").exists()
    assert not (dvc_project.root / "dvc.lock").exists()


def test_a_corrupt_corpus_is_refused_by_bpe_and_tokenize_run_alone(tokenized_project):
    # Before, `dvc repro -s tokenize` tokenized a corrupt corpus with exit 0, and the new
    # token files carried a hash of their own that every later check accepted.
    root = tokenized_project.root
    corpus = root / "data/raw/input.txt"
    data = bytearray(corpus.read_bytes())
    data[1000] ^= 0x01
    corpus.write_bytes(bytes(data))
    lock = (root / "dvc.lock").read_bytes()
    for stage in ("tokenize", "bpe"):  # tokenize first: DVC removes what bpe writes
        failed = tokenized_project.dvc("repro", "-s", stage, check=False)
        message = failed.stdout + failed.stderr
        assert failed.returncode != 0, message
        assert "error: data/raw/input.txt: SHA-256 " in message and "download.sha256" in message
        assert "Traceback" not in message
    # DVC removed the stages' outputs before running them; the stages wrote none back.
    assert not (root / "data/tokenizer/tokenizer.json").exists()
    assert not any((root / "data/tokens").glob("*")) and (root / "dvc.lock").read_bytes() == lock


def test_a_flipped_merge_of_the_tokenizer_is_refused_by_tokenize(tokenized_project):
    # The case: one flipped bit in a merge (["Ġs","e"] -> ["Ġs","a"]) still parsed,
    # and tokenize wrote 460,425 tokens with exit 0, not the bpe stage's 459,792.
    root = tokenized_project.root
    path = root / "data/tokenizer/tokenizer.json"
    text = path.read_text(encoding="utf-8")
    assert '["Ġs","e"]' in text
    path.unlink()  # not through a link DVC's cache may share
    path.write_text(text.replace('["Ġs","e"]', '["Ġs","a"]', 1), encoding="utf-8")
    failed = tokenized_project.dvc("repro", "-s", "tokenize", check=False)
    message = failed.stdout + failed.stderr
    assert failed.returncode != 0, message
    assert (
        "error: data/tokenizer/tokenizer.json: its SHA-256 differs from the one in "
        "data/tokenizer/manifest.json"
    ) in message
    assert "Traceback" not in message
    assert not any((root / "data/tokens").glob("*"))  # no token file of the wrong merges


def _limit_file_size() -> None:
    # A file cannot grow past 100 kB: a write beyond fails (EFBIG) as on a full disk.
    resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the error, not the signal's kill


def test_a_failed_token_write_names_the_file_and_keeps_the_old_one(tokenized_project):
    root = tokenized_project.root
    train = root / "data/tokens/train.parquet"
    before = train.read_bytes()
    failed = subprocess.run(
        [sys.executable, "pipeline/tokenize_corpus.py"],
        cwd=root,
        env=tokenized_project.env,
        capture_output=True,
        text=True,
        preexec_fn=_limit_file_size,
    )
    assert failed.returncode == 2, failed.stdout + failed.stderr
    assert failed.stderr.startswith("error: data/tokens/train.parquet: cannot write it")
    assert train.read_bytes() == before
    assert sorted(p.name for p in train.parent.iterdir()) == ["train.parquet", "val.parquet"]
