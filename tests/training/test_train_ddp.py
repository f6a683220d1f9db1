"""DDP on two CPU processes (gloo): one set of outputs, one W&B run (PITFALLS T6).

Each rank trains its half of every global batch (see attnlab.data.batches), so the run
is the one-process run up to float summation order: the gradients are averaged over two
halves instead of summed over one batch. The test asserts that documented closeness, not
bit equality.
"""

import json

import pytest
from train_helpers import free_port, offline_runs, run_folder, shrunk_params

from attnlab.runs import read_curve

pytestmark = pytest.mark.slow

VARIANT = "ladder-layernorm"
RUN = run_folder(VARIANT)
STEPS = 8


def test_two_cpu_processes_write_one_metrics_set_and_one_wandb_run(stage_project, train_in_process):
    ddp = shrunk_params(steps=STEPS, trainer={"devices": 2, "strategy": "ddp"})
    project = stage_project("ddp", ddp)
    project.env["MASTER_PORT"] = str(free_port())
    done = project.run(VARIANT)
    assert done.returncode == 0, done.stdout + done.stderr

    assert len(list(project.root.glob("reports/metrics/**/train.json"))) == 1
    metrics = json.loads((project.root / f"reports/metrics/{RUN}/train.json").read_text())
    assert metrics["world_size"] == 2 and metrics["steps"] == STEPS
    assert metrics["tokens_seen"] == STEPS * 8 * 32, "the global batch is the story's batch"
    assert len(offline_runs(project.root / "wandb")) == 1
    assert (project.root / f"data/models/{RUN}/model.pt").is_file()
    assert not list((project.root / "runs").glob("checkpoints/*/last.ckpt"))
    val = (project.root / f"reports/curves/{RUN}/val_ppl.csv").read_text().splitlines()
    assert [row.split(",")[0] for row in val[1:]] == [str(s) for s in range(STEPS + 1)]

    single = train_in_process(shrunk_params(steps=STEPS), VARIANT)
    curve = read_curve(project.root / f"reports/curves/{RUN}/train_loss.csv")
    assert [step for step, _ in curve] == list(range(STEPS))
    assert [loss for _, loss in curve] == pytest.approx(
        [loss for _, loss in single.curve], rel=1e-4
    )
