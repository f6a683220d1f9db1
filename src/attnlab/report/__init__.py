"""The report (issue: report): every experiment's tables, figures and claim verdicts.

:func:`build_report` reads what the pipeline measured (:class:`ReportInputs`), has every
claim of docs/catalogue.md decided from the numbers (:mod:`attnlab.verdicts`), and again
under each alternative protocol the catalogue lists (:mod:`attnlab.verdicts.robustness`),
lays each experiment out (:mod:`attnlab.report.sections`) and renders ``index.html`` (one
self-contained page), ``REPORT.md``, the browser demo, the headline metrics `dvc exp show`
compares (:mod:`attnlab.report.headline`) and the aggregates over seeds of every trained
measurement (:mod:`attnlab.report.aggregates`). Whatever was not measured shows as *not
run*; nothing missing makes it fail. Nothing here decides a claim.
"""

from dataclasses import dataclass
from typing import Any

from attnlab.report.aggregates import aggregates
from attnlab.report.demo import demo_payload, render_demo
from attnlab.report.headline import as_measured, headline
from attnlab.report.inputs import ReportInputs, Results, load_results
from attnlab.report.record_state import record_state
from attnlab.report.render import render_html, render_markdown
from attnlab.report.robustness_table import robustness_tables
from attnlab.report.sections import build_sections
from attnlab.verdicts import Verdict, judge_all
from attnlab.verdicts.robustness import robustness


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


def build_report(inputs: ReportInputs) -> Report:
    """Read the measurements under ``inputs`` and render the report from them."""
    results = load_results(inputs)
    verdicts = judge_all(results)
    sections = build_sections(results)
    tables = robustness_tables(robustness(results, verdicts))
    state = record_state(results, verdicts, inputs.code)
    rendered = (sections, verdicts, results.problems, tables, results.stale, state)
    return Report(
        index_html=render_html(*rendered),
        markdown=render_markdown(*rendered),
        demo_html=render_demo(demo_payload(results)),
        verdicts=verdicts,
        headline=headline(results, verdicts, load_results(as_measured(inputs))),
        summary=aggregates(results),
        stale=results.stale,
    )


__all__ = ["Report", "ReportInputs", "Results", "build_report", "load_results"]
