"""The one figure writer: a figure painted in points, written as a vector PDF (QPdfWriter), a
vector SVG (QSvgGenerator) or a 300-dpi PNG (QImage) by its file's suffix, atomically.

Every figure irviewer writes goes through :func:`write_figure` — ranked results
(:mod:`irviewer.gui.figure_painter`: File ▸ Export figure, ``irviewer figure``) and an
approximate search's sweep (:mod:`irviewer.gui.sweep_painter`, ``irviewer figure --sweep``)
— so the three formats are set up once: the PDF one page of exactly the figure's size, the
SVG's ``viewBox`` in points, the PNG's dpi in its ``pHYs`` chunk. The suffixes and the
sentence refusing another are :mod:`irviewer.view.figure_formats`'.

A painter's unit is the point on every device, scaled to the device's pixels; a font's
size is in the device's own points, so text is sized by :func:`font_points`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF, QRectF, QSize, QSizeF
from PySide6.QtGui import (
    QColor,
    QImage,
    QImageWriter,
    QPageLayout,
    QPageSize,
    QPainter,
    QPdfWriter,
)

from irviewer.core.errors import InputError
from irviewer.io.atomic import atomic_write_bytes
from irviewer.view import palette
from irviewer.view.figure_formats import DPI, figure_suffix

#: Paints the whole figure with a painter whose unit is the point.
Paint = Callable[[QPainter], None]


def write_figure(path: Path, width: float, height: float, paint: Paint, title: str,
                 description: str = "") -> None:
    """Write the figure of ``width`` × ``height`` points that ``paint`` draws to ``path``,
    as PDF, SVG or PNG by its suffix, atomically; ``title`` and ``description`` are the
    PDF's and SVG's metadata. Needs a QGuiApplication. InputError for another suffix or a
    file that cannot be written."""
    path = Path(path)
    data = _DEVICES[figure_suffix(path)](width, height, paint, title, description)
    try:
        atomic_write_bytes(path, data)
    except OSError as e:
        raise InputError(f"{path}: cannot write the figure ({e.strerror})") from None


def font_points(painter: QPainter, points: float) -> float:
    """Return the size to give ``QFont.setPointSizeF`` for text ``points`` high in the
    painter's unit: the writer's painter is scaled from points to the device's pixels,
    which a font's size already is in, so it is divided by the device's pixels per point."""
    return points * 72.0 / painter.device().logicalDpiY()


def png_size(width: float, height: float) -> QSize:
    """Return the PNG's size in pixels of a figure of ``width`` × ``height`` points."""
    return QSize(round(width * DPI / 72), round(height * DPI / 72))


# -- the three devices -----------------------------------------------------------------------

def _png_bytes(width: float, height: float, paint: Paint, _title: str,
               _description: str) -> bytes:
    image = QImage(png_size(width, height), QImage.Format.Format_RGB32)
    dots_per_metre = round(DPI / 0.0254)
    image.setDotsPerMeterX(dots_per_metre)
    image.setDotsPerMeterY(dots_per_metre)
    image.fill(QColor(palette.WHITE))
    painter = QPainter(image)
    painter.scale(DPI / 72, DPI / 72)
    paint(painter)
    painter.end()
    data, buffer = _buffer()
    # QImageWriter, not QImage.save: PySide6's type hints and its run time disagree on
    # save's format (bytes / str), and the writer says why it could not write.
    writer = QImageWriter(buffer, QByteArray(b"png"))
    if not writer.write(image):
        raise InputError(f"could not write the figure as png: {writer.errorString()}")
    buffer.close()
    return bytes(data.data())


def _pdf_bytes(width: float, height: float, paint: Paint, title: str,
               _description: str) -> bytes:
    data, buffer = _buffer()
    writer = QPdfWriter(buffer)
    writer.setResolution(DPI)
    writer.setCreator("irviewer")
    writer.setTitle(title)
    size = QPageSize(QSizeF(width, height), QPageSize.Unit.Point, "figure",
                     QPageSize.SizeMatchPolicy.ExactMatch)
    writer.setPageLayout(QPageLayout(size, QPageLayout.Orientation.Portrait,
                                     QMarginsF(0, 0, 0, 0), QPageLayout.Unit.Point))
    painter = QPainter(writer)
    painter.scale(DPI / 72, DPI / 72)
    paint(painter)
    painter.end()
    buffer.close()
    return bytes(data.data())


def _svg_bytes(width: float, height: float, paint: Paint, title: str,
               description: str) -> bytes:
    from PySide6.QtSvg import QSvgGenerator

    data, buffer = _buffer()
    generator = QSvgGenerator()
    generator.setOutputDevice(buffer)
    generator.setResolution(72)  # one SVG user unit per point
    generator.setSize(QSize(round(width), round(height)))
    generator.setViewBox(QRectF(0, 0, width, height))
    generator.setTitle(title)
    generator.setDescription(description)
    painter = QPainter(generator)
    paint(painter)
    painter.end()
    buffer.close()
    return bytes(data.data())


#: The device that writes each of :data:`irviewer.view.figure_formats.SUFFIXES`.
_DEVICES: dict[str, Callable[[float, float, Paint, str, str], bytes]] = {
    ".pdf": _pdf_bytes, ".svg": _svg_bytes, ".png": _png_bytes}


def _buffer() -> tuple[QByteArray, QBuffer]:
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    return data, buffer
