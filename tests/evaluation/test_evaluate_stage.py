"""The real evaluate stages at a tiny budget: every variant gets every key it should.

The stages run two at a time under ``attnlab repro`` (each one a real ``dvc repro
--single-item``; tests/fanout checks that this records what a serial ``dvc repro`` does),
and a serial ``dvc repro`` then finds nothing to do.
"""

import json
import math
from pathlib import Path

import pytest

from attnlab import result_code
from attnlab.catalogue import protocol_variants_of
from attnlab.config import parse_params
from attnlab.config.files import read_params_mapping
from attnlab.config.fingerprint import EVAL, FINGERPRINT, TRAIN
from attnlab.training.configurations import expected_runs

pytestmark = pytest.mark.slow

# One variant per kind of record: no mixer (and no extras), E09's undivided wide head,
# E11's post-norm blocks, E13's learned table (the one that must hold 256 positions).
KEEP = ("ladder-no-context", "dk-1024-unscaled", "norm-post", "positions-learned")
SEED = 1337  # the first of params seeds, the one seed the tests' project keeps
POST_NORM_BLOCKS = 3  # E11's 12 cut to a first, a middle and a last block


def _shrink(params: dict) -> None:
    params["budget"]["scale"] = 6 / 3000  # P0's 3000 steps become 6
    params["model"].update(d_model=32, block_size=32)
    params["train"].update(batch_size=8)
    params["trainer"].update(accelerator="cpu")
    params["runtime"].update(log_every_n_steps=2, checkpoint={"every_n_train_steps": 2})
    params["evaluate"].update(device="cpu", stats_windows=4, batch_size=64)
    # Whole-split perplexities dominate: narrow the wide head and cut the deep model.
    # A row moves with its protocol variants: each stays its row plus the overrides.
    for name in ("dk-1024-unscaled", *protocol_variants_of("dk-1024-unscaled")):
        params["variants"][name]["model"]["d_head"] = 64
    for name in ("norm-post", *protocol_variants_of("norm-post")):
        params["variants"][name]["model"]["n_layer"] = POST_NORM_BLOCKS


# What each kept variant's experiment measures beyond P0's (the catalogue's `measure`).
EXTRAS = {
    "ladder-no-context": (),
    "dk-1024-unscaled": ("score_stats",),
    "norm-post": ("grad_norms",),
    "positions-learned": ("extrapolation",),
}


# The steps each keeps along training (E09, E11): 0, the powers of two below the variant's
# steps times 6 / 3000 (at least 1), and the last.
ALONG = {"dk-1024-unscaled": [0, 1, 2, 3], "norm-post": [0, 1, 2]}


def _expected_keys(variant: str, n_layer: int, n_head: int) -> set[str]:
    keys = {"val/ppl", "val/tokens", "train/ppl", "train/tokens", "wall_s", "protocol"}
    keys.update({FINGERPRINT, result_code.CODE})
    keys |= {"seed", "init_seed", "data_seed"}
    keys |= {"val/bpb", "train/bpb"}
    keys |= {f"params/{c}" for c in ("embedding", "position", "attention", "mlp", "norm")}
    keys |= {"params/head", "params/total"}
    if "extrapolation" in EXTRAS[variant]:
        keys |= {"val/ppl@64", "val/ppl@128", "val/ppl@256"}
    if variant in ALONG:
        keys.add("along")
    if "score_stats" in EXTRAS[variant]:
        keys |= {
            f"{when}/{stat}/block_{b:02d}/head_{h:02d}"
            for when in ("init", "trained")
            for stat in ("scores/std", "attn/entropy", "attn/onehot_frac")
            for b in range(n_layer)
            for h in range(n_head)
        }
    if "grad_norms" in EXTRAS[variant]:
        definitions = ("weights_rms", "attention", "mlp", "eval")  # E11's protocols read them
        for prefix in ("grad_norm", *(f"grad_norm_{name}" for name in definitions)):
            keys |= {f"{prefix}/block_{b:02d}" for b in range(n_layer)}
            keys.add(f"{prefix}/ratio_last_first")
    return keys


def _assert_along_ends_where_the_record_does(root: Path) -> None:
    """Step 0 is the initialisation, the last step the trained model: the same numbers."""
    for name, steps in ALONG.items():
        record = json.loads((root / f"reports/metrics/{name}/seed-{SEED}/eval.json").read_text())
        along = record["along"]
        assert along["steps"] == steps, name
        manifest = root / f"data/models/{name}/seed-{SEED}/along/manifest.json"
        assert [e["step"] for e in json.loads(manifest.read_text())["steps"]] == steps
        assert "along" in record["protocol"]
        for key, values in along["metrics"].items():
            assert len(values) == len(steps), key
            if key.startswith(("scores/", "attn/")):  # E09: init/ and trained/ of the record
                assert values[0] == pytest.approx(record[f"init/{key}"], rel=1e-9), key
                assert values[-1] == pytest.approx(record[f"trained/{key}"], rel=1e-9), key
            else:  # E11: the record's are at initialisation (no dropout: no draw differs)
                assert values[0] == pytest.approx(record[key], rel=1e-9), key


def _assert_the_report_reads_these_runs_and_not_at_another_budget(root: Path) -> None:
    """The fingerprints the stages wrote are the ones the report computes from the params.

    Under twice the budget (the issue's mixed runs, the other way round) they are stale.
    """
    params = read_params_mapping(root / "params.yaml")
    expected = expected_runs(parse_params(params), [SEED])
    params["budget"]["scale"] *= 2
    doubled = expected_runs(parse_params(params), [SEED])
    for name in KEEP:
        for kind in (TRAIN, EVAL):
            record = json.loads(
                (root / f"reports/metrics/{name}/seed-{SEED}/{kind}.json").read_text()
            )
            assert record[FINGERPRINT] == expected[name][SEED].fingerprints[kind], name
            assert expected[name][SEED].differs(kind, record) is None, name
            assert doubled[name][SEED].differs(kind, record) is not None, name


def test_repro_evaluate_writes_every_key_for_its_variants(tokenized_project):
    project = tokenized_project
    project.env["WANDB_MODE"] = "disabled"  # W&B has its own tests; seconds a stage here
    project.edit_params(_shrink)
    # Only these variants' stages (and what they need): other sections of params.yaml
    # name variants, so the catalogue stays whole and only the targets are narrowed.
    targets = [f"evaluate@{name}-{SEED}" for name in KEEP]
    ran = set(project.fan_out(*targets))
    assert set(targets) <= ran
    assert {f"train@{name}-{SEED}" for name in KEEP} == {s for s in ran if s.startswith("train@")}

    root = project.root
    corpus = json.loads((root / "reports/metrics/corpus.json").read_text())
    shapes = {"dk-1024-unscaled": (1, 1), "norm-post": (POST_NORM_BLOCKS, 4)}
    for name in KEEP:
        record = json.loads((root / f"reports/metrics/{name}/seed-{SEED}/eval.json").read_text())
        n_layer, n_head = shapes.get(name, (1, 4))
        assert set(record) == _expected_keys(name, n_layer, n_head), name
        assert record["seed"] == record["init_seed"] == record["data_seed"] == SEED
        assert record["val/tokens"] == corpus["val_tokens"] - 1  # every token but the first
        assert record["train/tokens"] == corpus["train_tokens"] - 1
        skipped = ("protocol", "along", FINGERPRINT, result_code.CODE)
        numbers = [v for k, v in record.items() if k not in skipped]
        assert all(math.isfinite(v) for v in numbers), name
        assert 1 < record["val/ppl"] < 2 * 1024  # six steps: still near uniform over V
        assert set(record["protocol"]) >= {"perplexity", "params"}
        # Bits per byte: log2(ppl) spread over the bytes of a token (ASCII: one per char).
        expected = math.log2(record["val/ppl"]) / corpus["chars_per_token"]
        assert record["val/bpb"] == pytest.approx(expected, rel=0.1), name

    _assert_along_ends_where_the_record_does(root)
    _assert_the_report_reads_these_runs_and_not_at_another_budget(root)

    positions = root / f"reports/metrics/positions-learned/seed-{SEED}/eval.json"
    positions = json.loads(positions.read_text())
    assert positions["val/ppl@64"] == positions["val/ppl"]  # trained at 64: the same protocol
    assert project.ran_stages(project.dvc("repro", *targets).stdout) == []
    # The per-variant records are plain outputs: DVC's metrics are the report's headline.
    shown = project.dvc("metrics", "show", "--json").stdout
    assert "val/ppl@256" not in shown and "grad_norm/ratio_last_first" not in shown
