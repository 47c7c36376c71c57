"""Paint a :class:`irviewer.view.figure.FigureLayout`, written as a vector PDF, a vector SVG or
a 300 dpi PNG by the one figure writer (:mod:`irviewer.gui.figure_writer`). File ▸ Export
figure and ``irviewer figure`` call :func:`export_figure`; what is drawn where is the
layout's decision, not this module's.

Images are decoded with Pillow as the window's thumbnails are (bounded, a broken file or a
decompression bomb gives a "broken image" tile, a missing file a tile with its name).
Badges are drawn as shapes (check, cross, dash), not font glyphs, so they read the same in
every font, in greyscale and for colour-blind readers; the frame colours are the window's
Okabe–Ito theme.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QImage, QPainter, QPainterPath, QPen

from irviewer.core.evaluation import IGNORED, NEGATIVE, POSITIVE
from irviewer.gui.figure_writer import font_points, write_figure
from irviewer.gui.theme import QUERY_BOX, RELEVANCE
from irviewer.gui.widgets.thumbnails import BROKEN, decode_with_width
from irviewer.view import palette
from irviewer.view.figure import FigureLayout, FigureRow, Rect
from irviewer.view.figure_formats import DPI, figure_suffix

TILE_BACKGROUND = palette.TILE_PAPER
TEXT = palette.TEXT
MUTED = palette.MUTED_TEXT
#: The query tile's frame width in points (thinner than a result's: it carries no verdict).
QUERY_FRAME = 1.5


def export_figure(layout: FigureLayout, path: Path) -> None:
    """Write ``layout`` to ``path`` as PDF, SVG or PNG (by its suffix), atomically
    (:func:`irviewer.gui.figure_writer.write_figure`).

    Needs a QGuiApplication. InputError for another suffix or a file that cannot be written.
    """
    figure_suffix(path)  # before decoding any image
    images = _decode_all(layout)
    write_figure(Path(path), layout.width, layout.height,
                 lambda painter: paint_figure(painter, layout, images), "irviewer figure",
                 " ".join(layout.caption))


def paint_figure(painter: QPainter, layout: FigureLayout, images: dict[str, object]) -> None:
    """Paint ``layout`` with ``painter`` in points (the caller scales to its device);
    ``images`` maps an image path (str) to what :func:`decode_with_width` returned."""
    g = layout.geometry
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    painter.fillRect(QRectF(0, 0, layout.width, layout.height), QColor(palette.WHITE))
    font, small = _font(painter, g.font), _font(painter, g.small_font)
    bold = _font(painter, g.font, bold=True)
    _paint_legend(painter, layout, small)
    for row in layout.rows:
        painter.setFont(bold)
        painter.setPen(QColor(TEXT))
        header = painter.fontMetrics().elidedText(row.header, Qt.TextElideMode.ElideMiddle,
                                                  round(row.header_rect.w))
        painter.drawText(_qrect(row.header_rect), int(Qt.AlignmentFlag.AlignLeft
                                                      | Qt.AlignmentFlag.AlignVCenter), header)
        _paint_query(painter, row, images.get(str(row.query_path)), small)
        painter.setFont(font)
        painter.setPen(QColor(TEXT))
        painter.drawText(QRectF(row.query_rect.x, row.query_rect.y + row.query_rect.h + 1,
                                row.query_rect.w, g.caption_line),
                         int(Qt.AlignmentFlag.AlignLeft), "query")
        for cell in row.tiles:
            colour = QColor(RELEVANCE[cell.badge][0])
            _paint_image_tile(painter, cell.rect, colour, images.get(str(cell.tile.path)),
                              cell.tile.name, small, g.frame)
            _paint_badge(painter, cell.rect, cell.badge, g.badge)
            painter.setFont(font)
            painter.setPen(QColor(TEXT))
            below = QRectF(cell.rect.x, cell.rect.y + cell.rect.h + 1, cell.rect.w,
                           g.caption_line)
            painter.drawText(below, int(Qt.AlignmentFlag.AlignLeft), cell.rank_text)
            if cell.score_text:
                painter.setFont(small)
                painter.setPen(QColor(MUTED))
                painter.drawText(below, int(Qt.AlignmentFlag.AlignRight), cell.score_text)
    painter.setFont(small)
    painter.setPen(QColor(MUTED))
    for i, line in enumerate(layout.caption):
        r = layout.caption_rect
        painter.drawText(QRectF(r.x, r.y + i * g.caption_line, r.w, g.caption_line),
                         int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), line)


# -- pieces ----------------------------------------------------------------------------------

def _decode_all(layout: FigureLayout) -> dict[str, object]:
    """Return every image the figure shows, decoded once at 300 dpi of its tile."""
    size = round(layout.geometry.tile * DPI / 72)
    paths = {row.query_path for row in layout.rows}
    paths |= {cell.tile.path for row in layout.rows for cell in row.tiles}
    return {str(p): decode_with_width(p, size) for p in paths if p is not None}


def _paint_legend(painter: QPainter, layout: FigureLayout, font: QFont) -> None:
    g, r = layout.geometry, layout.legend_rect
    x = r.x
    painter.setFont(font)
    for badge, words in layout.legend:
        d = g.caption_line
        _badge_shape(painter, Rect(x, r.y, d, d), badge)
        painter.setPen(QColor(TEXT))
        text_rect = QRectF(x + d + 3, r.y, 200, d)
        painter.drawText(text_rect, int(Qt.AlignmentFlag.AlignLeft
                                        | Qt.AlignmentFlag.AlignVCenter), words)
        x += d + 3 + painter.fontMetrics().horizontalAdvance(words) + 12


def _paint_query(painter: QPainter, row: FigureRow, decoded: object, font: QFont) -> None:
    r = row.query_rect
    image, width = decoded if isinstance(decoded, tuple) else (None, 0)
    placed = _paint_image_tile(painter, r, QColor(QUERY_BOX), decoded, row.query_image, font,
                               QUERY_FRAME)
    if placed is not None and row.query_box is not None and width and isinstance(image,
                                                                                QImage):
        target, _ = placed
        f = target.width() / width
        x1, y1, x2, y2 = row.query_box
        painter.setPen(QPen(QColor(QUERY_BOX), 1.5))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRect(QRectF(target.x() + x1 * f, target.y() + y1 * f, (x2 - x1) * f,
                                (y2 - y1) * f))


def _paint_image_tile(painter: QPainter, rect: Rect, colour: QColor, decoded: object,
                      name: str, font: QFont, frame: float) -> tuple[QRectF, int] | None:
    """Paint a framed tile with the image fitted inside, or a named placeholder; return
    (the image's rectangle, its original width) when an image was drawn."""
    outer = _qrect(rect)
    inner = _qrect(rect.inset(frame))
    painter.fillRect(outer, colour)
    painter.fillRect(inner, QColor(TILE_BACKGROUND))
    image, width = decoded if isinstance(decoded, tuple) else (None, 0)
    if isinstance(image, QImage) and not image.isNull():
        s = min(inner.width() / image.width(), inner.height() / image.height())
        w, h = image.width() * s, image.height() * s
        target = QRectF(inner.center().x() - w / 2, inner.center().y() - h / 2, w, h)
        painter.drawImage(target, image)
        return target, width
    painter.setFont(font)
    painter.setPen(QColor(MUTED))
    label = ("broken image" if image == BROKEN else "missing image") + "\n" + Path(name).name
    painter.drawText(inner.adjusted(2, 2, -2, -2),
                     int(Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWrapAnywhere), label)
    return None


def _paint_badge(painter: QPainter, rect: Rect, badge: int, diameter: float) -> None:
    if RELEVANCE[badge][1]:  # a plain tile (nothing to judge it by) has no badge
        _badge_shape(painter, Rect(rect.x + 3, rect.y + 3, diameter, diameter), badge)


def _badge_shape(painter: QPainter, r: Rect, badge: int) -> None:
    """Draw a badge: a disc in the relevance colour with a white outline and a white shape
    (✓ relevant, ✗ not relevant, – ignored, = same camera) drawn as strokes."""
    colour = QColor(RELEVANCE[badge][0])
    painter.setPen(QPen(QColor(palette.WHITE), max(0.8, r.w / 12)))
    painter.setBrush(colour)
    painter.drawEllipse(_qrect(r))
    pen = QPen(QColor(palette.WHITE), max(1.0, r.w / 7))
    pen.setCapStyle(Qt.PenCapStyle.RoundCap)
    pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
    painter.setPen(pen)
    painter.setBrush(Qt.BrushStyle.NoBrush)

    def at(fx: float, fy: float) -> QPointF:
        return QPointF(r.x + fx * r.w, r.y + fy * r.h)

    path = QPainterPath()
    if badge == POSITIVE:
        path.moveTo(at(0.27, 0.52))
        path.lineTo(at(0.44, 0.69))
        path.lineTo(at(0.74, 0.33))
    elif badge == NEGATIVE:
        path.moveTo(at(0.32, 0.32))
        path.lineTo(at(0.68, 0.68))
        path.moveTo(at(0.68, 0.32))
        path.lineTo(at(0.32, 0.68))
    elif badge == IGNORED:
        path.moveTo(at(0.28, 0.5))
        path.lineTo(at(0.72, 0.5))
    else:  # an own badge (same camera): "="
        for fy in (0.4, 0.6):
            path.moveTo(at(0.3, fy))
            path.lineTo(at(0.7, fy))
    painter.drawPath(path)


def _font(painter: QPainter, points: float, bold: bool = False) -> QFont:
    font = QFont("DejaVu Sans")
    font.setPointSizeF(font_points(painter, points))
    font.setBold(bold)
    return font


def _qrect(r: Rect) -> QRectF:
    return QRectF(r.x, r.y, r.w, r.h)
