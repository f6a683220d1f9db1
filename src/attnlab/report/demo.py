"""The browser demo page (docs/catalogue.md, "The browser demo"), with the real maps filled in.

The page itself is plain HTML and JavaScript (``demo.html`` beside this module): no build
step, no network. Rendering only embeds the trained Winograd models' attention maps as a
JSON island, so the page shows them offline; with none, it says the stage has not run.
"""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

PLACEHOLDER = '"__WINOGRAD_MAPS__"'


def render_demo(maps: dict[str, Any]) -> str:
    """The demo page with ``maps`` (model -> adjective -> tokens and block rows) embedded."""
    template = files("attnlab.report").joinpath("demo.html").read_text(encoding="utf-8")
    if PLACEHOLDER not in template:
        raise ValueError("demo.html has lost its Winograd placeholder")
    # "<" escaped so no "</script>" inside the data can end the JSON island early.
    # Key order is kept (crosser adjectives first): the page lists them in that order.
    payload = json.dumps(maps, separators=(",", ":")).replace("<", "\\u003c")
    return template.replace(PLACEHOLDER, payload)
