"""Figure export: the PDF is a vector PDF with one page of the layout's size, the SVG parses
and embeds every image, the PNG is 300 dpi and its frame pixels carry the relevance colours,
a missing image is a named tile."""

from __future__ import annotations

import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from PIL import Image

from irviewer.core.errors import InputError
from irviewer.core.evaluation import NEGATIVE, POSITIVE
from irviewer.gui.figure_painter import export_figure
from irviewer.gui.figure_writer import png_size
from irviewer.gui.theme import QUERY_BOX, RELEVANCE
from irviewer.opening.opener import open_now
from irviewer.opening.request import OpenRequest
from irviewer.view.figure import layout_figure
from irviewer.view.figure_formats import DPI
from tests.figure_case import MISSING, make_case

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def layout(tmp_path, qapp):
    manifest = make_case(tmp_path)
    opened = open_now(OpenRequest(manifest, (tmp_path / "first.npz",
                                             tmp_path / "second.npz")))
    evaluations = [(m, opened.evaluation(m, "instance")) for m in opened.methods]
    return layout_figure(evaluations, [0, 1], 5, scores=True)


def rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))


def px(points: float) -> int:
    return int(points * DPI / 72)


def test_png_frames_carry_the_relevance_colours(layout, tmp_path):
    out = tmp_path / "fig.png"
    export_figure(layout, out)
    with Image.open(out) as im:
        assert im.info["dpi"] == pytest.approx((DPI, DPI), abs=0.01)
        size = png_size(layout.width, layout.height)
        assert im.size == (size.width(), size.height())
        pixels = np.asarray(im.convert("RGB")).astype(int)
    frame = layout.geometry.frame
    checked = set()
    for row in layout.rows:
        for cell in row.tiles:
            r = cell.rect
            # the middle of the left and the bottom frame strips (the badge is top left)
            for x, y in ((r.x + frame / 2, r.y + r.h / 2), (r.x + r.w / 2, r.y + r.h - frame / 2)):
                assert tuple(pixels[px(y), px(x)]) == rgb(RELEVANCE[cell.badge][0]), (
                    row.header, cell.tile.name)
            checked.add(cell.badge)
            # a photograph inside, not the tile background (but the missing image)
            centre = tuple(pixels[px(r.y + r.h / 2), px(r.x + r.w / 2)])
            assert (centre == (0xF4, 0xF2, 0xEE)) == (cell.tile.name == MISSING)
        q = row.query_rect
        assert tuple(pixels[px(q.y + q.h / 2), px(q.x + 0.75)]) == rgb(QUERY_BOX)
    assert len(checked) == 2  # relevant and not relevant both sampled


def test_pdf_is_one_vector_page_of_the_layout_size(layout, tmp_path):
    out = tmp_path / "fig.pdf"
    export_figure(layout, out)
    data = out.read_bytes()
    assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF")
    assert len(re.findall(rb"/Type\s*/Page\b", data)) == 1
    box = re.search(rb"/MediaBox\s*\[\s*0\s+0\s+([\d.]+)\s+([\d.]+)\s*\]", data)
    assert box is not None
    assert float(box.group(1)) == pytest.approx(layout.width, abs=1)
    assert float(box.group(2)) == pytest.approx(layout.height, abs=1)
    assert b"/FontFile2" in data  # text is text (an embedded font), not pixels
    # every distinct photograph is embedded once (Qt shares an image drawn twice)
    paths = {c.tile.path for r in layout.rows for c in r.tiles} | {
        r.query_path for r in layout.rows}
    assert len(re.findall(rb"/Subtype\s*/Image", data)) == sum(p.is_file() for p in paths)
    if shutil.which("pdftoppm"):
        page = tmp_path / "page"
        subprocess.run(["pdftoppm", "-r", "72", "-png", "-singlefile", str(out), str(page)],
                       check=True, timeout=60)
        with Image.open(f"{page}.png") as im:
            assert abs(im.width - layout.width) <= 1 and abs(im.height - layout.height) <= 1
            pixels = np.asarray(im.convert("RGB")).astype(int)
        cell = layout.rows[0].tiles[0]
        x, y = int(cell.rect.x + 1.5), int(cell.rect.y + cell.rect.h / 2)
        assert np.abs(pixels[y, x] - rgb(RELEVANCE[cell.badge][0])).max() <= 3


def test_svg_parses_with_images_and_words(layout, tmp_path):
    out = tmp_path / "fig.svg"
    export_figure(layout, out)
    root = ET.parse(out).getroot()
    assert root.tag == f"{SVG}svg"
    assert root.get("viewBox") == f"0 0 {layout.width:g} {layout.height:g}"
    images = root.findall(f".//{SVG}image")
    shown = sum(1 for r in layout.rows for c in r.tiles if c.tile.name != MISSING)
    assert len(images) == shown + len(layout.rows)  # every photo and every query image
    words = " ".join(t.strip() for t in root.itertext())
    assert "Query A · first.npz · AP 83.3" in words
    assert "missing image" in words and MISSING in words
    assert "#1" in words and "protocol instance" in words


def test_other_suffix_is_refused(layout, tmp_path):
    with pytest.raises(InputError, match=r"fig.gif: a figure is written as .pdf, .svg or .png"):
        export_figure(layout, tmp_path / "fig.gif")
    with pytest.raises(InputError, match="does not exist"):
        export_figure(layout, tmp_path / "no" / "fig.png")


def test_query_box_is_drawn_on_the_query_image(layout, tmp_path):
    from dataclasses import replace

    from irviewer.gui.figure_painter import QUERY_FRAME

    # the query image qa.jpg is 120 x 90 px; box x from 30 to 90, y from 20 to 70
    row = replace(layout.rows[0], query_box=(30.0, 20.0, 90.0, 70.0))
    boxed = replace(layout, rows=(row,))
    export_figure(boxed, tmp_path / "box.png")
    with Image.open(tmp_path / "box.png") as im:
        pixels = np.asarray(im.convert("RGB")).astype(int)
    inner = row.query_rect.inset(QUERY_FRAME)
    scale = inner.w / 120  # the image fills the tile's width
    top = inner.y + (inner.h - 90 * scale) / 2
    left_edge = (inner.x + 30 * scale, top + 45 * scale)  # on the box's left side
    inside = (inner.x + 60 * scale, top + 45 * scale)     # the middle of the box
    assert tuple(pixels[px(left_edge[1]), px(left_edge[0])]) == rgb(QUERY_BOX)
    assert tuple(pixels[px(inside[1]), px(inside[0])]) != rgb(QUERY_BOX)


def test_badges_differ_in_shape_when_printed_in_greyscale(layout, tmp_path):
    # Green and vermillion frames are nearly the same grey; the badge's shape is the cue:
    # the strokes of ✗ cross at the badge's centre (white), those of ✓ pass beside it.
    out = tmp_path / "fig.png"
    export_figure(layout, out)
    with Image.open(out) as im:
        grey = np.asarray(im.convert("L")).astype(int)
    d = layout.geometry.badge
    centres = {}
    for row in layout.rows:
        for cell in row.tiles:
            x, y = cell.rect.x + 3 + d / 2, cell.rect.y + 3 + d / 2
            centres.setdefault(cell.badge, []).append(grey[px(y), px(x)])
    assert min(centres[NEGATIVE]) >= 250
    assert max(centres[POSITIVE]) <= 150
