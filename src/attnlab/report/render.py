"""The report as one self-contained HTML page and as Markdown, from the same sections.

The page carries its CSS and its figures inline (data URIs) and loads nothing: it opens
from disk, offline. Its only links out are the sweep trials' W&B runs, when params
``wandb`` names an entity. Nothing on it depends on the time of rendering, so the same
measurements always give the same bytes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from html import escape
from importlib.resources import files

from attnlab.report.content import Section, Table
from attnlab.report.verdict_text import basis, deciding_runs
from attnlab.verdicts import FAILS, HOLDS, INCONCLUSIVE, NOT_RUN, STATUSES, Verdict

TITLE = "attnlab: attention and the transformer block, derived from an average"
BADGE = {HOLDS: "holds", FAILS: "fails", INCONCLUSIVE: "inconclusive", NOT_RUN: "notrun"}
STALE_TITLE = "Runs left out as stale"
STALE_NOTE = (
    "Their records were made under other params than the current ones (another budget, "
    "recipe or seed): no table, verdict or headline reads them. Rerun them to count them."
)


def _counts(verdicts: list[Verdict], skip_zeros: bool = False) -> str:
    counts = Counter(v.status for v in verdicts)
    shown = [s for s in STATUSES if counts[s] or not skip_zeros]
    return ", ".join(f"{counts[s]} {s}" for s in shown)


BASIS_NOTE = (
    "A verdict's badge says what it rests on: n, the seeds; 95 % CI [low, high], the 95 % "
    "t-interval over those seeds of what the claim's test measures (the mean of one "
    "measurement, or of a per-seed ratio or difference, named in its test); p, a binomial "
    "test's p-value; exact, one computation, no sampling. Hover a badge for its test."
)


def _badge(verdict: Verdict) -> str:
    shown = basis(verdict)
    extra = f' <span class="n">{escape(shown)}</span>' if shown else ""
    test = f' title="{escape(verdict.claim.rule.test)}"' if shown else ""
    return f'<span class="badge {BADGE[verdict.status]}"{test}>{verdict.status}{extra}</span>'


def _inconclusive(verdicts: list[Verdict]) -> list[Verdict]:
    return [v for v in verdicts if v.status == INCONCLUSIVE]


def _inconclusive_html(verdicts: list[Verdict]) -> str:
    pending = _inconclusive(verdicts)
    if not pending:
        return ""
    rows = "".join(
        f'<tr><td><a href="#{v.claim.experiment}">{v.claim.id}</a></td>'
        f"<td>{escape(v.claim.text)}</td><td>{escape(deciding_runs(v))}</td></tr>"
        for v in pending
    )
    head = "<tr><th>claim</th><th>the story says</th><th>the runs that would decide it</th></tr>"
    return (
        '<section id="inconclusive"><h2>Inconclusive claims</h2><p class="note">The '
        "interval straddles the threshold, or one seed gives no interval. The estimate "
        "assumes the spread stays as measured.</p>"
        f'<div class="scroll"><table class="inconclusive"><thead>{head}</thead><tbody>'
        f"{rows}</tbody></table></div></section>"
    )


def _table_html(table: Table) -> str:
    # A column named with underscores (train_wrong_noun) may break after each: unbroken,
    # a wide table's headers pushed its last columns past the page's right edge.
    head = "".join(f"<th>{escape(h).replace('_', '_<wbr>')}</th>" for h in table.header)
    body = "".join(
        "<tr>" + "".join(f"<td{_cls(c)}{_title(c)}>{_linked(c)}</td>" for c in row) + "</tr>"
        for row in table.rows
    )
    note = f'<p class="note">{escape(table.note)}</p>' if table.note else ""
    return (
        f'<h3>{escape(table.title)}</h3><div class="scroll"><table><thead><tr>{head}'
        f"</tr></thead><tbody>{body}</tbody></table></div>{note}"
    )


def _linked(text: str) -> str:
    href = getattr(text, "href", "")
    return f'<a href="{escape(href)}">{escape(text)}</a>' if href else escape(text)


def _title(text: str) -> str:
    detail = getattr(text, "detail", "")
    return f' title="{escape(detail)}"' if detail else ""


def _cls(text: str) -> str:
    if text == NOT_RUN:
        return ' class="missing"'
    return ' class="long"' if len(text) > 40 else ""


def _summary_html(verdicts: list[Verdict]) -> str:
    rows = "".join(
        f'<tr><td><a href="#{v.claim.experiment}">{v.claim.id}</a></td>'
        f"<td>{escape(v.claim.text)}</td>"
        f"<td>{_badge(v)}</td></tr>"
        for v in verdicts
    )
    head = "<tr><th>claim</th><th>the story says</th><th>verdict</th></tr>"
    return (
        f'<div class="scroll"><table class="summary"><thead>{head}</thead><tbody>{rows}'
        "</tbody></table></div>"
    )


def _verdicts_html(verdicts: list[Verdict]) -> str:
    rows = []
    for v in verdicts:
        where = f"<td>{v.claim.id}</td>"
        rows.append(
            f'<tr class="verdict">{where}<td>{escape(v.claim.text)}</td>'
            f'<td>{escape(v.claim.rule.test)}<div class="note">{escape(v.claim.reading)}</div>'
            f"</td><td>{_badge(v)}</td>"
            f"<td>{escape(v.evidence)}</td></tr>"
        )
    head = (
        "<tr><th>claim</th><th>the story says</th><th>test (threshold)</th><th>verdict</th>"
        "<th>the numbers that decided it</th></tr>"
    )
    return (
        f'<div class="scroll"><table class="claims"><thead>{head}</thead><tbody>'
        f"{''.join(rows)}</tbody></table></div>"
    )


def _section_html(section: Section, verdicts: list[Verdict], robustness: Table | None) -> str:
    parts = [
        f'<section id="{section.id}"><h2>{escape(section.id)}: {escape(section.title)}'
        f'</h2><p class="question">{escape(section.question)}</p>'
    ]
    if not section.ran:
        parts.append('<p class="notrun">Not run: no measurement of this experiment exists yet.</p>')
    if section.protocol:
        items = "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in section.protocol)
        parts.append(f"<details open><summary>Protocol</summary><dl>{items}</dl></details>")
    parts += [_table_html(t) for t in section.tables]
    for image in section.figures:
        caption = f"<figcaption>{escape(image.caption)}</figcaption>" if image.caption else ""
        parts.append(
            f'<figure><img src="{image.uri}" alt="{escape(image.title)}">{caption}</figure>'
        )
    if verdicts:
        parts.append("<h3>Claims</h3>" + _verdicts_html(verdicts))
    if robustness is not None:
        parts.append(_table_html(robustness))
    parts += [f'<p class="note">{escape(n)}</p>' for n in section.notes]
    return "".join(parts) + "</section>"


def _stale_html(stale: Sequence[str]) -> str:
    if not stale:
        return ""
    items = "".join(f"<li>{escape(line)}</li>" for line in stale)
    return (
        f'<section id="stale"><h2>{STALE_TITLE}</h2><p class="note">{STALE_NOTE}</p>'
        f"<ul>{items}</ul></section>"
    )


def render_html(
    sections: list[Section],
    verdicts: list[Verdict],
    problems: list[str],
    robustness: Mapping[str, Table] | None = None,
    stale: Sequence[str] = (),
) -> str:
    """The whole report as one HTML page (CSS and figures inline, no script, no link out).

    ``robustness``: by experiment id, its claims under its other protocols, shown after
    its claims. ``stale``: the runs left out, one line each, shown before the claims.
    """
    robustness = robustness or {}
    css = files("attnlab.report").joinpath("templates/report.css").read_text(encoding="utf-8")
    by_section = {s.id: [v for v in verdicts if v.claim.experiment == s.id] for s in sections}
    toc = "".join(
        f'<li><a href="#{s.id}">{escape(s.id)}: {escape(s.title)}</a>'
        f"{'' if s.ran else ' <span class=badge-small>not run</span>'}"
        f"{' (' + _counts(by_section[s.id], True) + ')' if by_section[s.id] else ''}</li>"
        for s in sections
    )
    issues = "".join(f"<li>{escape(p)}</li>" for p in problems)
    body = [
        f"<header><h1>{escape(TITLE)}</h1><p>Every number below was read from the files the "
        "pipeline wrote under <code>reports/</code>; every verdict is computed from them by "
        "the rule printed beside it. <strong>Claims: " + _counts(verdicts) + ".</strong></p>"
        '<p><a class="demo" href="demo.html">Open the interactive demo: how attention finds '
        "things</a></p></header>",
        _stale_html(stale),
        f"<nav><h2>Contents</h2><ol>{toc}</ol></nav>",
        '<section id="claims"><h2>Every claim of the catalogue</h2><p class="note">Each '
        "claim's test, threshold and deciding numbers are in its experiment's section. "
        f"{BASIS_NOTE}</p>" + _summary_html(verdicts) + "</section>",
        _inconclusive_html(verdicts),
        *(_section_html(s, by_section[s.id], robustness.get(s.id)) for s in sections),
    ]
    if problems:
        body.append(
            f'<section id="problems"><h2>Files that could not be read</h2><ul>{issues}'
            "</ul></section>"
        )
    body.append(
        "<footer>Rendered by <code>dvc repro report</code>. The curves are also "
        "available as <code>dvc plots show</code>.</footer>"
    )
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
        f'content="width=device-width, initial-scale=1"><title>{escape(TITLE)}</title>'
        f"<style>{css}</style></head><body>{''.join(body)}</body></html>\n"
    )


def _md_cell(text: str) -> str:
    shown = text.replace("|", "\\|").replace("\n", " ")
    href = getattr(text, "href", "")
    return f"[{shown}]({href})" if href else shown


def _md_table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    lines = ["| " + " | ".join(_md_cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _md_verdicts(verdicts: list[Verdict]) -> str:
    return _md_table(
        ("claim", "the story says", "test (threshold)", "verdict", "the numbers"),
        [
            (
                v.claim.id,
                v.claim.text,
                f"{v.claim.rule.test} ({v.claim.reading})",
                f"**{v.status}**" + (f" ({basis(v)})" if basis(v) else ""),
                v.evidence,
            )
            for v in verdicts
        ],
    )


def _md_table_section(t: Table) -> list[str]:
    """A table as a ``###`` heading, the table and its note."""
    return [
        f"### {t.title}",
        "",
        _md_table(t.header, list(t.rows)),
        "",
        *([t.note, ""] if t.note else []),
    ]


def render_markdown(
    sections: list[Section],
    verdicts: list[Verdict],
    problems: list[str],
    robustness: Mapping[str, Table] | None = None,
    stale: Sequence[str] = (),
) -> str:
    """The same tables and verdicts as the page, in Markdown (figures: see index.html)."""
    robustness = robustness or {}
    out = [
        f"# {TITLE}",
        "",
        "Read from the files under `reports/`; each verdict is computed by the rule beside "
        "it. Figures and the interactive demo are in `index.html` and `demo.html`.",
        "",
        f"**Claims: {_counts(verdicts)}.**",
        "",
        *(
            [f"## {STALE_TITLE}", "", STALE_NOTE, "", *(f"- {line}" for line in stale), ""]
            if stale
            else []
        ),
        "## Every claim of the catalogue",
        "",
        BASIS_NOTE.removesuffix(" Hover a badge for its test."),
        "",
        _md_verdicts(verdicts),
        "",
    ]
    pending = _inconclusive(verdicts)
    if pending:
        out += [
            "## Inconclusive claims",
            "",
            _md_table(
                ("claim", "the story says", "the runs that would decide it"),
                [(v.claim.id, v.claim.text, deciding_runs(v)) for v in pending],
            ),
            "",
        ]
    for s in sections:
        out += [f"## {s.id}: {s.title}", "", f"*{s.question}*", ""]
        if not s.ran:
            out += ["Not run: no measurement of this experiment exists yet.", ""]
        if s.protocol:
            out += [_md_table(("protocol", ""), list(s.protocol)), ""]
        for t in s.tables:
            out += _md_table_section(t)
        mine = [v for v in verdicts if v.claim.experiment == s.id]
        if mine:
            out += ["### Claims", "", _md_verdicts(mine), ""]
        if s.id in robustness:
            out += _md_table_section(robustness[s.id])
    if problems:
        out += ["## Files that could not be read", "", *(f"- {p}" for p in problems), ""]
    return "\n".join(out)
