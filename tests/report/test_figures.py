"""The report's inline images: deterministic bytes, a palette PNG, transparency on white."""

import base64
import io

from matplotlib.figure import Figure
from PIL import Image

from attnlab.report import figures


def _decode(uri: str, kind: str) -> bytes:
    prefix = f"data:image/{kind};base64,"
    assert uri.startswith(prefix)
    return base64.b64decode(uri[len(prefix) :])


def _curve_panel() -> Figure:
    steps = list(range(0, 1000, 5))
    return figures.curves(
        {
            f"variant-{k}": {
                seed: [(s, seed * 5.0 / (1 + k) + 1e-3 * ((s * (k + 3)) % 17)) for s in steps]
                for seed in (1, 2)
            }
            for k in range(8)
        },
        {
            f"variant-{k}": {
                seed: [(s, seed * 300.0 / (1 + k + s / 100)) for s in steps[::20]]
                for seed in (1, 2)
            }
            for k in range(8)
        },
        "eight variants",
    )


def test_a_curve_over_seeds_is_their_mean_and_min_max_at_the_steps_all_recorded():
    runs = {1: [(0, 1.0), (1, 3.0), (2, 5.0)], 2: [(1, 5.0), (2, 9.0)], 3: [(1, 4.0), (2, 1.0)]}
    assert figures.seed_band(runs) == ([1, 2], [4.0, 5.0], [3.0, 1.0], [5.0, 9.0])


def test_the_same_figure_encodes_to_the_same_bytes_twice():
    assert figures.to_data_uri(_curve_panel()) == figures.to_data_uri(_curve_panel())


def test_a_figure_is_a_palette_png_smaller_than_matplotlibs_own_png():
    fig = _curve_panel()
    plain = io.BytesIO()
    fig.savefig(plain, format="png", dpi=figures.DPI)
    png = _decode(figures.to_data_uri(fig), "png")
    with Image.open(io.BytesIO(png)) as image:
        assert image.mode == "P"
        assert len(image.getcolors(maxcolors=256)) <= figures.PALETTE_COLOURS
        assert image.size == Image.open(plain).size
    assert len(png) < len(plain.getvalue()) / 2


def test_transparent_pixels_of_a_stage_png_become_white_not_black(tmp_path):
    drawn = Image.new("RGBA", (4, 2), (0, 0, 0, 0))
    drawn.putpixel((0, 0), (200, 30, 30, 255))
    path = tmp_path / "probe.png"
    drawn.save(path)
    with Image.open(io.BytesIO(_decode(figures.file_data_uri(path), "png"))) as image:
        rgb = image.convert("RGB")
        assert rgb.getpixel((3, 1)) == (255, 255, 255)
        assert rgb.getpixel((0, 0)) == (200, 30, 30)


def test_an_svg_another_stage_drew_is_inlined_byte_for_byte(tmp_path):
    svg = b'<svg xmlns="http://www.w3.org/2000/svg" width="2" height="2"/>'
    path = tmp_path / "drawn.svg"
    path.write_bytes(svg)
    assert _decode(figures.file_data_uri(path), "svg+xml") == svg
