"""The browser demo page (docs/catalogue.md, "The browser demo"), with the real maps filled in.

The page itself is plain HTML and JavaScript (the template ``templates/demo.html``): no
build step, no network. Rendering only embeds the trained Winograd models' attention maps
as a JSON island, so the page shows them offline; with none, it says the stage has not run.
"""

from __future__ import annotations

import json
from typing import Any

from markupsafe import Markup

from attnlab.catalogue import experiments
from attnlab.report.inputs import Results
from attnlab.report.render import PAGE
from attnlab.report.winograd_section import source
from attnlab.verdicts.winograd_maps import CROSSER, read_maps


def demo_payload(results: Results) -> dict[str, Any]:
    """The maps of every Winograd model that has them, for the browser demo (JSON-ready)."""
    payload: dict[str, Any] = {}
    tasks = {key: entry for key, entry in experiments().items() if entry.task}
    for key, entry in tasks.items():
        for row in entry.rows:
            maps = read_maps(results, source(row.variant))
            if maps:
                payload[f"{key}, {entry.task}, {row.label}"] = {
                    adj: {
                        "tokens": list(m.tokens),
                        "blocks": [list(b) for b in m.blocks],
                        "role": "crosser" if adj in CROSSER else "crossed",
                        "answer": m.answer,
                    }
                    for adj, m in maps.items()
                }
    return payload


def render_demo(maps: dict[str, Any]) -> str:
    """The demo page with ``maps`` (model -> adjective -> tokens and block rows) embedded."""
    # "<" escaped so no "</script>" inside the data can end the JSON island early: the
    # island is script data, not HTML, so the JSON goes in as it is (Markup), unescaped.
    # Key order is kept (crosser adjectives first): the page lists them in that order.
    payload = json.dumps(maps, separators=(",", ":")).replace("<", "\\u003c")
    return PAGE.get_template("demo.html").render(maps=Markup(payload))
