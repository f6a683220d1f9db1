"""The report laid out from the record and its decisions: :func:`build_report`.

It takes what the pipeline measured (:class:`~attnlab.report.inputs.Results`) and every
decision made from it (:class:`~attnlab.verdicts.decisions.Decisions`, made once by
:func:`attnlab.verdicts.decide`), lays each experiment out
(:mod:`attnlab.report.sections`) and renders ``index.html`` (one self-contained page),
``REPORT.md``, the browser demo, the headline metrics `dvc exp show` compares
(:mod:`attnlab.report.headline`) and the aggregates over seeds of every trained
measurement (:mod:`attnlab.report.aggregates`). Whatever was not measured shows as *not
run*; nothing missing makes it fail.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from attnlab.catalogue import Experiment
from attnlab.report.aggregates import aggregates
from attnlab.report.demo import demo_payload, render_demo
from attnlab.report.figures import matplotlib_defaults
from attnlab.report.headline import headline
from attnlab.report.inputs import Results
from attnlab.report.record_state import record_state
from attnlab.report.render import render_html, render_markdown
from attnlab.report.robustness_table import robustness_tables
from attnlab.report.sections import build_sections
from attnlab.report.stale import CodeDigests
from attnlab.verdicts.decisions import Decisions, Verdict


@dataclass(frozen=True)
class Report:
    """The rendered report: the page, its Markdown twin, the demo, and every verdict.

    ``summary`` holds the aggregates over seeds, by metrics source; ``stale`` names the
    records left out because other params or other code made them.
    """

    index_html: str
    markdown: str
    demo_html: str
    verdicts: list[Verdict]
    headline: dict[str, Any]
    summary: dict[str, dict[str, dict[str, Any]]]
    stale: list[str]


def build_report(
    results: Results,
    decisions: Decisions,
    code: CodeDigests | None = None,
    entries: Mapping[str, Experiment] | None = None,
    measured: Results | None = None,
) -> Report:
    """Lay out ``results`` and the ``decisions`` made from them as the report.

    Args:
        results: What the pipeline measured.
        decisions: Every decision made from ``results``.
        code: The digests of each recording stage's code in the checkout (the record's
            state is judged against them; ``None``: not judged).
        entries: The experiments laid out, in order (default: the catalogue's).
        measured: The same records with none left out as stale, for the headline's runs
            that have no current record (:func:`~attnlab.report.headline.headline`).
    """
    verdicts = decisions.verdicts
    with matplotlib_defaults():
        sections = build_sections(results, decisions, entries)
    tables = robustness_tables(decisions.robustness, entries)
    state = record_state(results, verdicts, code)
    rendered = (sections, verdicts, results.problems, tables, results.stale, state)
    return Report(
        index_html=render_html(*rendered),
        markdown=render_markdown(*rendered),
        demo_html=render_demo(demo_payload(results)),
        verdicts=verdicts,
        headline=headline(results, verdicts, measured),
        summary=aggregates(results),
        stale=results.stale,
    )
