"""What the Winograd accuracy curve costs a run: one held-out score against one training step.

winograd-train scores the held-out sentences at steps 0, 1, 2, 4, ... and the last (13
points for 2000 steps). This times one score of the closed task's held-out split and one
AdamW step of a 64-sentence batch, alternately, for every Winograd model of params.yaml,
and prints the medians and the share of a full run the curve adds.

    python benchmarks/winograd_accuracy_curve.py [--repeats 15]
"""

import argparse
import statistics
import time

import torch
import torch.nn.functional as F

from attnlab.config import load_params
from attnlab.models import LanguageModel
from attnlab.winograd.accuracy_curve import log_spaced_steps
from attnlab.winograd.from_params import build_task
from attnlab.winograd.scoring import score_model
from attnlab.winograd.sentences import encode


def _timed(work) -> float:
    began = time.perf_counter()
    work()
    return time.perf_counter() - began


def main() -> None:
    """Print, per Winograd model, the median score and step times and the curve's share."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15, help="timings of each, alternated")
    repeats = parser.parse_args().repeats
    torch.set_num_threads(1)  # as winograd-train runs (winograd.torch_threads)
    loaded = load_params("params.yaml")
    cfg = loaded.winograd
    for name in ("closed-average", "closed-one-block", "closed-two-blocks"):
        task = build_task(cfg, cfg.task_of(name), loaded.seed)
        ids = {
            split: torch.tensor([encode(s.words, task.vocabulary) for s in task.split(split)])
            for split in ("train", "held_out")
        }  # (N, 18) each
        variant = cfg.variant(name)
        model = LanguageModel(variant.model)
        optimiser = torch.optim.AdamW(model.parameters(), lr=variant.train.lr)
        batch = ids["train"][: variant.train.batch_size]  # (B, 18)

        def step(model=model, optimiser=optimiser, batch=batch) -> None:
            logits = model(batch[:, :-1])  # (B, 17, V)
            loss = F.cross_entropy(logits.flatten(0, 1), batch[:, 1:].flatten())
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()

        scores, steps = [], []
        for _ in range(repeats):
            scores.append(_timed(lambda m=model, s=ids["held_out"]: score_model(m, s)))
            steps.append(_timed(step))
        score_s, step_s = statistics.median(scores), statistics.median(steps)
        points = len(log_spaced_steps(variant.train.steps))
        share = points * score_s / (variant.train.steps * step_s)
        print(
            f"{name}: score of {len(ids['held_out'])} sentences {1000 * score_s:.2f} ms, "
            f"step {1000 * step_s:.2f} ms (ratio {score_s / step_s:.2f}); {points} points "
            f"add {100 * share:.2f} % to {variant.train.steps} steps"
        )


if __name__ == "__main__":
    main()
