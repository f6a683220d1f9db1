"""A real browser for the report's tests: Debian's Chromium, headless, via Playwright.

Every request the browser makes is recorded; anything that is not ``file:`` or ``data:``
is refused, and :meth:`Browser.left_the_machine` lists it. Without Chromium the tests that
use it fail (CI installs it: ``apt-get install -y chromium``); they never skip.
"""

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
        pytest.fail(f"{CHROMIUM} is missing: install Debian's Chromium (apt-get install -y "
                    "chromium); the browser tests need a real browser and do not skip")
    from playwright.sync_api import sync_playwright

    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), headless=True, args=ARGS,
            viewport={"width": 1280, "height": 900},
        )
        yield Browser(context)
        context.close()
