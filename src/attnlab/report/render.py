"""The report as one self-contained HTML page and as Markdown, from the same sections.

Both come from the Jinja2 templates beside this module (``templates/``): ``index.html``,
one template per part of the page under ``page/``, and ``REPORT.md``, its parts under
``markdown/``. The page carries its stylesheet (``report.css``) and its figures inline
(data URIs) and loads nothing: it opens from disk, offline. Its only links out are the
sweep trials' W&B runs, when params ``wandb`` names an entity. Nothing on it depends on the
time of rendering, so the same measurements always give the same bytes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from attnlab.report.content import MISSING, Section, Table
from attnlab.report.record_state import RecordState
from attnlab.report.verdict_text import basis, deciding_runs
from attnlab.verdicts.decisions import FAILS, HOLDS, INCONCLUSIVE, NOT_RUN, STALE, STATUSES, Verdict

TITLE = "attnlab: attention and the transformer block, derived from an average"
BADGE = {
    HOLDS: "holds",
    FAILS: "fails",
    INCONCLUSIVE: "inconclusive",
    STALE: "stale",
    NOT_RUN: "notrun",
}


def counts(verdicts: list[Verdict], skip_zeros: bool = False) -> str:
    """The tally of ``verdicts`` by status, in words: ``3 holds, 1 does not hold, ...``."""
    found = Counter(v.status for v in verdicts)
    shown = [s for s in STATUSES if found[s] or not skip_zeros]
    return ", ".join(f"{found[s]} {s}" for s in shown)


def md_cell(text: str) -> str:
    """A table cell in Markdown: its pipes escaped, on one line, a link when it has one."""
    shown = text.replace("|", "\\|").replace("\n", " ")
    href = getattr(text, "href", "")
    return f"[{shown}]({href})" if href else shown


def _escaped(value: Any) -> Markup:
    """A value as the page prints it: escaped as :func:`html.escape` spells it.

    Jinja's autoescape spells a quote ``&#39;`` and ``&#34;``; the standard library's
    ``&#x27;`` and ``&quot;`` are what the page has always had, so the same measurements
    keep giving the same bytes. What a template made already (a macro's output) passes.
    """
    return value if isinstance(value, Markup) else Markup(escape(str(value)))


def _environment(**options: Any) -> Environment:
    environment = Environment(
        loader=PackageLoader("attnlab.report", "templates"),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        **options,
    )
    environment.filters.update(
        counts=counts, basis=basis, deciding_runs=deciding_runs, md_cell=md_cell
    )
    environment.globals.update(title=TITLE, badge_class=BADGE, missing=MISSING)
    return environment


PAGE = _environment(autoescape=True, finalize=_escaped)
MARKDOWN = _environment(autoescape=False, trim_blocks=True, lstrip_blocks=True)


def _context(
    sections: list[Section],
    verdicts: list[Verdict],
    problems: list[str],
    robustness: Mapping[str, Table] | None,
    stale: Sequence[str],
    state: RecordState | None,
) -> dict[str, Any]:
    """What both templates read: every section with its own verdicts, and the rest."""
    return {
        "sections": sections,
        "verdicts": verdicts,
        "by_section": {s.id: [v for v in verdicts if v.claim.experiment == s.id] for s in sections},
        "pending": [v for v in verdicts if v.status == INCONCLUSIVE],
        "problems": problems,
        "robustness": robustness or {},
        "stale": stale,
        "state": state,
    }


def render_html(
    sections: list[Section],
    verdicts: list[Verdict],
    problems: list[str],
    robustness: Mapping[str, Table] | None = None,
    stale: Sequence[str] = (),
    state: RecordState | None = None,
) -> str:
    """The whole report as one HTML page (CSS and figures inline, no script, no link out).

    ``robustness``: by experiment id, its claims under its other protocols, shown after
    its claims. ``stale``: the records left out, one line each, listed under ``state``, the
    record's state, which the page opens with (``None``: a page without it).
    """
    page = PAGE.get_template("index.html")
    return page.render(_context(sections, verdicts, problems, robustness, stale, state))


def render_markdown(
    sections: list[Section],
    verdicts: list[Verdict],
    problems: list[str],
    robustness: Mapping[str, Table] | None = None,
    stale: Sequence[str] = (),
    state: RecordState | None = None,
) -> str:
    """The same tables and verdicts as the page, in Markdown (figures: see index.html)."""
    markdown = MARKDOWN.get_template("REPORT.md")
    return markdown.render(_context(sections, verdicts, problems, robustness, stale, state))
