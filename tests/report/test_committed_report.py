"""The committed report is a render of the committed record, by the code it is committed with.

The page once showed the Winograd claims at n = 3 while the committed metrics held n = 10,
and runs of code 165 commits old as current: a landing changed the metrics or the code and
did not re-render. Rendering the committed ``reports/`` with the committed params must give
the committed page, REPORT.md, headline and summaries, byte for byte.
"""

import json
from pathlib import Path

import pytest

from attnlab import paths
from attnlab.config import load_params
from attnlab.paths import metrics_text
from attnlab.stages.report import report_inputs, report_of

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def rendered():
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(ROOT)  # the report reads reports/ relative to the project, as DVC runs it
        return report_of(report_inputs(load_params(ROOT / "params.yaml")))


RENDER = "render it again: `dvc repro report` (or `attnlab report`), then commit reports/"


def test_the_committed_page_and_markdown_are_a_render_of_the_committed_record(rendered):
    assert (ROOT / paths.REPORT_INDEX).read_text(encoding="utf-8") == rendered.index_html, RENDER
    assert (ROOT / paths.REPORT_MARKDOWN).read_text(encoding="utf-8") == rendered.markdown, RENDER
    assert (ROOT / paths.DEMO).read_text(encoding="utf-8") == rendered.demo_html, RENDER


def test_the_committed_headline_and_summaries_are_a_render_of_the_committed_record(rendered):
    assert json.loads((ROOT / paths.HEADLINE).read_text()) == rendered.headline, RENDER
    committed = {
        path.relative_to(ROOT / paths.SUMMARY).with_suffix("").as_posix(): path.read_text()
        for path in (ROOT / paths.SUMMARY).rglob("*.json")
    }
    assert committed == {
        source: metrics_text(record) for source, record in rendered.summary.items()
    }, RENDER
