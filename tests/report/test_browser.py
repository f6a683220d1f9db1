"""The demo and the report in a real browser (the ``browser`` fixture: Debian's Chromium).

The pages are opened from disk, as a reader would; the arithmetic the demo shows is
checked against the same arithmetic done here.
"""

import math

import pytest
from report_fabricate import inputs, maps, write_run

from attnlab.stages.report import report_of


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """The report and the demo of a full tiny-budget run, and a demo with no maps."""
    folder = tmp_path_factory.mktemp("pages")
    full = report_of(inputs(write_run(folder / "reports")))
    (folder / "index.html").write_text(full.index_html)
    (folder / "demo.html").write_text(full.demo_html)
    bare = report_of(inputs(folder / "nothing"))
    (folder / "bare-demo.html").write_text(bare.demo_html)
    return folder, full


def _attend(words, wq, i, masked, tau):
    query = [sum(w * c for w, c in zip(row, words[i]["card"], strict=True)) for row in wq]
    seen = [j for j in range(len(words)) if j != i and not (masked and j > i)]
    dots = {j: sum(q * k for q, k in zip(query, words[j]["card"], strict=True)) for j in seen}
    exps = {j: math.exp(d / tau) for j, d in dots.items()}
    total = sum(exps.values())
    return dots, {j: e / total for j, e in exps.items()}


def _bars(page):
    return page.eval_on_selector_all(
        "#bars .bar-row",
        "rows => rows.map(r => [Number(r.dataset.index), "
        "Number(r.dataset.weight), r.querySelector('.pct').textContent])",
    )


def _steps(page):
    return page.eval_on_selector_all(
        "#steps tbody tr",
        "rows => rows.map(r => [Number(r.dataset.index), r.className, "
        "{...r.dataset}, [...r.cells].map(c => c.textContent)])",
    )


def _set_tau(page, tau: float) -> None:
    page.eval_on_selector(
        "#temperature",
        "(el, v) => { el.value = v; el.dispatchEvent(new Event('input')); }",
        str(tau),
    )


@pytest.mark.parametrize("tau", [2.0, 0.5, 8.0])
def test_every_word_without_the_mask_matches_the_arithmetic(browser, pages, tau):
    page, errors = browser.open(pages[0] / "demo.html")
    words, wq = page.evaluate("[WORDS, WQ]")
    shown = page.eval_on_selector_all("#sentence .card", "cards => cards.map(c => c.textContent)")
    assert shown == ["[" + ", ".join(f"{x:.1f}" for x in w["card"]) + "]" for w in words]
    page.uncheck("#mask")
    _set_tau(page, tau)
    for i in range(len(words)):
        page.click(f'#sentence button[data-index="{i}"]')
        dots, weights = _attend(words, wq, i, masked=False, tau=tau)
        bars = _bars(page)
        assert [j for j, _, _ in bars] == sorted(weights)
        for j, weight, text in bars:
            assert weight == pytest.approx(weights[j], abs=1e-12)
            assert text == f"{100 * weights[j]:.1f} %"
        assert sum(w for _, w, _ in bars) == pytest.approx(1.0, abs=1e-12)
        for j, kind, data, cells in _steps(page):
            assert kind == "visible"
            assert float(data["dot"]) == pytest.approx(dots[j], abs=1e-12)
            assert float(data["score"]) == pytest.approx(dots[j] / tau, abs=1e-12)
            assert float(data["exp"]) == pytest.approx(math.exp(dots[j] / tau), rel=1e-12)
            assert cells[2] == f"{dots[j]:.3f}" and cells[5] == f"{100 * weights[j]:.1f} %"
    assert errors == [] and "NaN" not in page.inner_text("body")
    page.close()


def test_the_causal_mask_empty_first_word_and_certain_second_word(browser, pages, tmp_path):
    page, errors = browser.open(pages[0] / "demo.html")
    assert page.is_checked("#mask")
    page.click('#sentence button[data-index="0"]')
    assert page.is_visible("#empty") and "Nobody to look at" in page.inner_text("#empty")
    assert _bars(page) == []
    assert {kind for _, kind, _, _ in _steps(page)} == {"masked"}
    assert "NaN" not in page.inner_text("body")

    page.click('#sentence button[data-index="1"]')
    assert not page.is_visible("#empty")
    bars = _bars(page)
    assert [(j, w, t) for j, w, t in bars] == [(0, 1.0, "100.0 %")]
    kinds = [kind for _, kind, _, _ in _steps(page)]
    assert kinds == ["visible"] + ["masked"] * 6

    words, wq = page.evaluate("[WORDS, WQ]")
    page.click('#sentence button[data-index="6"]')  # "it": every earlier word, none later
    _, weights = _attend(words, wq, 6, masked=True, tau=2.0)
    assert {j: w for j, w, _ in _bars(page)} == pytest.approx(weights, abs=1e-12)
    page.screenshot(path=tmp_path / "demo.png", full_page=True)
    assert (tmp_path / "demo.png").stat().st_size > 10_000
    assert errors == []
    page.close()


def test_a_smaller_temperature_sharpens_and_a_larger_one_flattens(browser, pages):
    page, _ = browser.open(pages[0] / "demo.html")
    page.uncheck("#mask")
    page.click('#sentence button[data-index="2"]')  # "chased"
    largest = {}
    for tau in (0.5, 2.0, 8.0):
        _set_tau(page, tau)
        largest[tau] = max(w for _, w, _ in _bars(page))
    assert largest[0.5] > largest[2.0] > largest[8.0] > 1 / 7
    page.click("#reset-tau")
    assert page.input_value("#temperature") == "2"
    page.close()


def test_the_winograd_panel_shows_the_embedded_maps_or_says_not_run(browser, pages):
    page, errors = browser.open(pages[0] / "demo.html")
    page.click('#winograd button[data-adjective="wet"]')
    rows = page.eval_on_selector_all(
        "#winograd table.maps tr",
        "rows => rows.slice(1).map(r => [...r.querySelectorAll('td')].map(c => c.textContent))",
    )
    expected = maps()["wet"]["blocks"]
    assert rows == [[f"{100 * w:.0f}%" for w in block] for block in expected]
    assert errors == []
    page.close()
    bare, _ = browser.open(pages[0] / "bare-demo.html")
    assert "Not run yet" in bare.inner_text("#winograd-empty")
    bare.close()


def test_the_report_loads_every_figure_and_nothing_from_the_network(browser, pages, tmp_path):
    folder, full = pages
    page, errors = browser.open(folder / "index.html")
    page.wait_for_load_state("load")
    images = page.eval_on_selector_all(
        "img", "imgs => imgs.map(i => [i.complete, i.naturalWidth, i.alt])"
    )
    expected = full.index_html.count("<img ")
    assert len(images) == expected > 10
    assert all(done and width > 0 for done, width, _ in images), images
    page.screenshot(path=tmp_path / "index.png")
    assert browser.requested and browser.left_the_machine() == []
    page.click("a.demo")
    page.wait_for_load_state("load")
    assert page.url.endswith("/demo.html") and errors == []
    page.close()


def test_the_demo_opens_with_the_pronoun_selected_and_its_query_worked(browser, pages):
    page, errors = browser.open(pages[0] / "demo.html")
    assert page.get_attribute("#sentence .word.selected", "data-index") == "6"  # "it"
    assert _bars(page) and _steps(page) and page.inner_text("#query").strip()
    assert errors == []
    page.close()


def test_no_table_runs_off_the_page_and_every_badge_names_its_interval(browser, pages):
    page, _ = browser.open(pages[0] / "index.html")
    overflowing = page.eval_on_selector_all(
        "div.scroll",
        "boxes => boxes.filter(b => b.scrollWidth > b.clientWidth)"
        ".map(b => b.querySelector('th').textContent)",
    )
    assert overflowing == []  # E17's held-out table ran off the right edge
    badges = page.eval_on_selector_all(".badge", "bs => bs.map(b => [b.textContent, b.title])")
    intervals = [(text, title) for text, title in badges if "[" in text]
    assert intervals and all("95 % CI [" in text and title for text, title in intervals)
    assert all(title for text, title in badges if "n = " in text or "exact" in text)
    assert "95 % t-interval over those seeds" in page.inner_text("#claims .note")
    page.close()
