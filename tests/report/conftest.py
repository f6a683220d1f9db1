"""A real browser for the report's tests: Debian's Chromium, headless, via Playwright.

Every request the browser makes is recorded; anything that is not ``file:`` or ``data:``
is refused, and :meth:`Browser.left_the_machine` lists it. Without Chromium the tests that
use it skip, saying why; with ``ATTNLAB_REQUIRE_BROWSER=1`` (``.ci/run`` sets it, after
installing Chromium) they fail instead, so CI can never pass without the browser.
"""

import os
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
LOCAL = ("file:", "data:")


class Browser:
    """A browser context that records every request made through it."""

    def __init__(self, context) -> None:
        self.context = context
        self.requested: list[str] = []
        context.on("request", lambda request: self.requested.append(request.url))
        context.route("**/*", self._only_local)

    @staticmethod
    def _only_local(route) -> None:
        if route.request.url.startswith(LOCAL):
            route.continue_()
        else:
            route.abort()

    def open(self, path: Path):
        """A new page on ``path``; returns the page and the list its script errors go to."""
        self.requested.clear()
        page = self.context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(path.as_uri())
        return page, errors

    def left_the_machine(self) -> list[str]:
        """The URLs requested since the last :meth:`open` that were not local."""
        return [url for url in self.requested if not url.startswith(LOCAL)]


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """Chromium with a fresh profile, headless, closed after the module."""
    if not CHROMIUM.is_file():
        missing = f"{CHROMIUM} is missing: install Debian's Chromium (apt-get install chromium)"
        if os.environ.get("ATTNLAB_REQUIRE_BROWSER") == "1":
            pytest.fail(f"{missing}; ATTNLAB_REQUIRE_BROWSER=1 makes the browser tests required")
        pytest.skip(missing)
    from playwright.sync_api import sync_playwright

    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=str(CHROMIUM),
            headless=True,
            args=ARGS,
            viewport={"width": 1280, "height": 900},
        )
        yield Browser(context)
        context.close()
