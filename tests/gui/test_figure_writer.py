"""The one figure writer: each format is set up once (a PDF page of the figure's size, an
SVG viewBox in points, a 300-dpi PNG), text is as many points high on every device, and
another suffix or an unwritable file is one sentence."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from PIL import Image
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QPainter

from irviewer.core.errors import InputError
from irviewer.gui.figure_writer import font_points, png_size, write_figure
from irviewer.view.figure_formats import DPI

WIDTH, HEIGHT = 200.0, 120.0
#: DejaVu Sans's capital letters are 0.729 of the font's size high.
CAP_HEIGHT = 0.729


def paint_h(painter: QPainter) -> None:
    """A white figure with one black "H" of 40 points at its top left."""
    painter.fillRect(QRectF(0, 0, WIDTH, HEIGHT), QColor("white"))
    font = QFont("DejaVu Sans")
    font.setPointSizeF(font_points(painter, 40))
    painter.setFont(font)
    painter.setPen(QColor("black"))
    painter.drawText(QRectF(10, 10, 150, 80), int(Qt.AlignmentFlag.AlignLeft
                                                  | Qt.AlignmentFlag.AlignTop), "H")


def test_png_is_300_dpi_and_text_is_as_many_points_high(qapp, tmp_path):
    out = tmp_path / "f.png"
    write_figure(out, WIDTH, HEIGHT, paint_h, "a title")
    with Image.open(out) as im:
        assert im.info["dpi"] == pytest.approx((DPI, DPI), abs=0.01)
        size = png_size(WIDTH, HEIGHT)
        assert im.size == (size.width(), size.height()) == (833, 500)
        ink = np.asarray(im.convert("L")) < 128
    rows = np.flatnonzero(ink.any(axis=1))
    height_points = (rows[-1] - rows[0] + 1) * 72 / DPI
    assert height_points == pytest.approx(40 * CAP_HEIGHT, rel=0.08)


def test_pdf_is_one_page_of_the_figure_s_size(qapp, tmp_path):
    out = tmp_path / "f.pdf"
    write_figure(out, WIDTH, HEIGHT, paint_h, "a title")
    data = out.read_bytes()
    assert data.startswith(b"%PDF-")
    boxes = re.findall(rb"/MediaBox\s*\[\s*0\s+0\s+([\d.]+)\s+([\d.]+)\s*\]", data)
    assert [(float(w), float(h)) for w, h in boxes] == [(WIDTH, HEIGHT)]


def test_svg_is_in_points_with_its_title_and_text_size(qapp, tmp_path):
    out = tmp_path / "f.svg"
    write_figure(out, WIDTH, HEIGHT, paint_h, "a title", "what it shows")
    root = ET.parse(out).getroot()
    svg = "{http://www.w3.org/2000/svg}"
    assert root.get("viewBox") == f"0 0 {WIDTH:g} {HEIGHT:g}"
    assert root.find(f"{svg}title").text == "a title"
    assert root.find(f"{svg}desc").text == "what it shows"
    texts = [(t.text, t.get("font-size")) for t in root.iter(f"{svg}text")]
    assert texts == [("H", "40")]


def test_another_suffix_or_an_unwritable_file_is_one_sentence(qapp, tmp_path):
    with pytest.raises(InputError, match=r"^f\.gif: a figure is written as \.pdf, \.svg or \.png$"):
        write_figure(tmp_path / "f.gif", WIDTH, HEIGHT, paint_h, "t")
    with pytest.raises(InputError, match="does not exist"):
        write_figure(tmp_path / "no" / "f.png", WIDTH, HEIGHT, paint_h, "t")
    assert list(tmp_path.iterdir()) == []
