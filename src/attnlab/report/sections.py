"""The report's sections in the story's order, each with the builder that fills it.

One entry per experiment of docs/catalogue.md (the catalogue has no E01: P0, the base
protocol, comes first), then the sweeps. A builder reads :class:`Results` and fills the
section's protocol, tables and figures; it never raises for a missing measurement.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from attnlab.report import computed, sweep_section, tasks, trained
from attnlab.report.content import Section
from attnlab.report.results import Results

Builder = Callable[[Results, Section], None]


@dataclass(frozen=True)
class Entry:
    """One section of the story: its id, title, the question it asks and its builder."""

    id: str
    title: str
    question: str
    build: Builder


STORY: tuple[Entry, ...] = (
    Entry(
        "P0",
        "The base protocol",
        "Tiny Shakespeare, byte-level BPE with 1024 tokens, "
        "d_model 128, context 128, AdamW at 1e-3, 3000 steps of 64 windows.",
        computed.corpus,
    ),
    Entry(
        "E02",
        "The ladder",
        "Start from no context, average the prefix, then repair the "
        "average one piece at a time until it is a transformer block.",
        trained.ladder,
    ),
    Entry(
        "E03",
        "Shuffling the window",
        "Is the causal mean's last row blind to word order?",
        computed.computed,
    ),
    Entry(
        "E04",
        "Three ways to average",
        "Loop, lower-triangular matmul, softmax over a masked zero matrix: the same numbers?",
        computed.computed,
    ),
    Entry(
        "E05",
        "Var(q.k)",
        "How large is a dot product of two random d-dimensional vectors?",
        computed.computed,
    ),
    Entry(
        "E06",
        "Effective tokens",
        "How many of 64 keys does a softmax row look at, with and without dividing by sqrt(d_k)?",
        computed.computed,
    ),
    Entry(
        "E07",
        "Frozen rows",
        "How often is a softmax row saturated (its Jacobian nearly zero)?",
        computed.computed,
    ),
    Entry(
        "E08",
        "Dividing scores by sqrt(d_k)",
        "Each width trained with and without the division, in identical settings.",
        trained.dk,
    ),
    Entry(
        "E09",
        "What the undivided head does",
        "Score spread, entropy and one-hot rows, at "
        "initialisation and after training (the d_k = 1024 short runs).",
        trained.score_stats,
    ),
    Entry(
        "E10",
        "Where a block's parameters are",
        "Attention, MLP and LayerNorm parameters of one block at several widths.",
        computed.computed,
    ),
    Entry(
        "E11",
        "Pre-norm vs post-norm",
        "12 blocks, with and without warmup; the gradient of each block at initialisation.",
        trained.norms,
    ),
    Entry(
        "E12",
        "Permutation equivariance",
        "Without positions and mask, does attention commute with a permutation of its input?",
        computed.computed,
    ),
    Entry(
        "E13",
        "Positions and length extrapolation",
        "Trained on 64 tokens, each position method evaluated at 64, 128 and 256.",
        trained.positions,
    ),
    Entry(
        "E14",
        "The cost of attention",
        "Time and memory of one attention layer as n doubles, naive and fused.",
        computed.computed,
    ),
    Entry(
        "E15",
        "GPT-2 small",
        "124,439,808 parameters by formula and by a built module?",
        computed.computed,
    ),
    Entry(
        "E16",
        "Winograd, the leaky version",
        "x is always an animal and y a place: can a bag of words resolve 'it'?",
        tasks.winograd,
    ),
    Entry(
        "E17",
        "Winograd, the closed version",
        "Either noun in either slot: order matters. Who resolves 'it', and how?",
        tasks.winograd,
    ),
    Entry("E18", "One block vs two", "Does depth help on train and on validation?", trained.depth),
    Entry(
        "E19",
        "Implementation check",
        "Our multi-head attention against PyTorch's two.",
        computed.computed,
    ),
    Entry(
        "sweeps",
        "Sweeps",
        "Optuna studies of the head width d_k and of warmup x norm "
        "placement x head count; objective: validation perplexity.",
        sweep_section.sweeps,
    ),
)


def build_sections(results: Results) -> list[Section]:
    """Every section of the story in :data:`STORY`'s order, filled from ``results``."""
    sections = []
    for entry in STORY:
        section = Section(entry.id, entry.title, entry.question)
        entry.build(results, section)
        sections.append(section)
    return sections
