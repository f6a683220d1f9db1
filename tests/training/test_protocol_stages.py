"""A protocol variant is an ordinary trained variant: its override reruns its own runs only.

The catalogue's protocols (E09's no-weight-decay here) add variants to params.yaml, so
the train@ and evaluate@ matrices run them under the record's seeds with no stage of their
own; the real ``dvc repro --dry`` after an edit of the protocol variant's override lists
its training alone, never its row's.
"""

import pytest

from attnlab.catalogue import protocol_variants_of

pytestmark = pytest.mark.slow

SEED = 1337
ROW, PROTOCOL = "dk-1024-scaled", "dk-1024-scaled-no-decay"
# Exact names: a glob of the row's (dk-1024-scaled-*) also matches its other protocols' runs.
TARGETS = tuple(
    f"{stage}@{name}-{SEED}" for stage in ("train", "evaluate") for name in (ROW, PROTOCOL)
)


def _shrink(params: dict) -> None:
    params["seeds"] = [SEED]
    params["budget"]["scale"] = 0.002  # 3 steps of the short protocol's 1500
    params["model"].update(d_model=32, block_size=32)
    params["runtime"]["log_every_n_steps"] = 1
    params["evaluate"]["stats_windows"] = 2
    # The 1024-wide head dominates the whole-split perplexities: narrowed, and the row
    # moves with its protocol variants (each stays its row plus the overrides).
    for name in (ROW, *protocol_variants_of(ROW)):
        params["variants"][name]["model"]["d_head"] = 64


def _decay(value: float):
    def edit(params: dict) -> None:
        params["variants"][PROTOCOL]["train"]["weight_decay"] = value

    return edit


def _repro(project, *options: str) -> set[str]:
    done = project.dvc("repro", *options, "--glob", *TARGETS)
    return set(project.ran_stages(done.stdout))


def test_a_protocol_variants_override_reruns_only_its_own_runs(tokenized_project):
    project = tokenized_project
    project.env["OMP_NUM_THREADS"] = "1"
    project.env["WANDB_MODE"] = "disabled"
    project.edit_params(_shrink)
    # The row's and the protocol's runs are independent chains: the fan-out runs them
    # side by side (each stage a real `dvc repro --single-item`).
    ran = set(project.fan_out(*(f"evaluate@{name}-{SEED}" for name in (ROW, PROTOCOL))))
    assert ran == {
        f"{stage}@{name}-{SEED}" for stage in ("train", "evaluate") for name in (ROW, PROTOCOL)
    }
    assert _repro(project, "--dry") == set()  # recorded: nothing to redo

    project.edit_params(_decay(0.05))  # the protocol's override, edited in params alone
    assert _repro(project, "--dry") == {f"train@{PROTOCOL}-{SEED}"}
