"""A step's batch is a pure function of (seed, step, rank), whatever the loader did before."""

from functools import partial

import torch
from torch.utils.data import DataLoader

from attnlab.data.batches import StepBatches, draw_windows

TOKENS = torch.arange(10_000, dtype=torch.int64).to(torch.uint16)  # token i is i: offsets show
T, B, SEED = 16, 8, 1337
DRAW = partial(draw_windows, TOKENS, T, B, SEED)  # what TokenWindows hands StepBatches


def test_the_same_step_draws_the_same_windows_and_the_targets_are_shifted():
    first = draw_windows(TOKENS, T, B, SEED, step=7)
    again = draw_windows(TOKENS, T, B, SEED, step=7)
    assert first.step == 7
    assert first.x.shape == first.y.shape == (B, T) and first.x.dtype == torch.int64
    assert torch.equal(first.x, again.x) and torch.equal(first.y, again.y)
    assert torch.equal(first.y[:, :-1], first.x[:, 1:])
    assert torch.equal(first.x[:, 1:] - first.x[:, :-1], torch.ones(B, T - 1, dtype=torch.int64))


def test_steps_and_seeds_draw_different_windows():
    base = draw_windows(TOKENS, T, B, SEED, step=0).x
    assert not torch.equal(base, draw_windows(TOKENS, T, B, SEED, step=1).x)
    assert not torch.equal(base, draw_windows(TOKENS, T, B, SEED + 1, step=0).x)
    # seed s, step t+1 is not seed s+1, step t (the seeds are mixed, not added)
    shifted = draw_windows(TOKENS, T, B, SEED + 1, step=0).x
    assert not torch.equal(shifted, draw_windows(TOKENS, T, B, SEED, step=1).x)


def test_ranks_split_the_one_process_batch_in_contiguous_slices():
    whole = draw_windows(TOKENS, T, B, SEED, step=3)
    halves = [draw_windows(TOKENS, T, B, SEED, 3, rank=r, world_size=2) for r in (0, 1)]
    assert torch.equal(torch.cat([h.x for h in halves]), whole.x)
    assert torch.equal(torch.cat([h.y for h in halves]), whole.y)


def test_a_loader_started_at_step_k_yields_exactly_the_tail_of_a_full_run():
    full = list(StepBatches(DRAW, start=0, stop=10))
    tail = list(StepBatches(DRAW, start=6, stop=10))
    assert [b.step for b in tail] == [6, 7, 8, 9]
    for a, b in zip(full[6:], tail, strict=True):
        assert torch.equal(a.x, b.x)


def test_workers_interleave_back_into_step_order():
    batches = StepBatches(DRAW, start=3, stop=11)
    loader = DataLoader(batches, batch_size=None, num_workers=2)
    got = list(loader)
    assert [b.step for b in got] == list(range(3, 11))
    for batch in got:
        assert torch.equal(batch.x, draw_windows(TOKENS, T, B, SEED, batch.step).x)


def test_the_global_rng_is_left_alone():
    torch.manual_seed(0)
    before = torch.get_rng_state()
    list(StepBatches(DRAW, start=0, stop=3))
    assert torch.equal(before, torch.get_rng_state())
