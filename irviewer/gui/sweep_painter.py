"""A sweep's figure: the task metric (mAP) against search time per query, one point per
setting, the exact ranking's mAP as a dashed line — the curve ann-benchmarks draws for
recall, drawn here for mAP. Painted with QPainter in points, so the window's sweep dialog
(the ann feature's) and ``irviewer figure --sweep`` (PDF, SVG, PNG by the one figure writer,
:mod:`irviewer.gui.figure_writer`) show the same figure."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from irviewer.gui.figure_writer import font_points, write_figure
from irviewer.view import palette
from irviewer.view.sweep_view import SweepView

#: The figure's size in points (and the sweep dialog's figure's natural size in pixels).
SIZE = QSize(640, 400)
_CURVE = QColor(palette.SELECTED)
_EXACT = QColor(palette.LOSS)
_GRID = QColor(palette.FIGURE_GRID)
_INK = QColor(palette.PLOT_INK)
_PAPER = QColor(palette.WHITE)


def paint_sweep(painter: QPainter, area: QRectF, view: SweepView) -> None:
    """Paint the sweep ``view`` (:func:`irviewer.view.sweep_view.sweep_view`) into
    ``area``: x = search time per query (ms, log scale), y = mAP (%), each setting a
    labelled point, the exact mAP at the same depth a dashed line. ``painter``'s unit is the
    point."""
    title = view.title
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.fillRect(area, _PAPER)
    font = QFont()
    font.setPointSizeF(font_points(painter, 8.5))
    painter.setFont(font)
    left, right, top, bottom = 58.0, 18.0, 30.0 if title else 14.0, 46.0
    plot = QRectF(area.left() + left, area.top() + top, area.width() - left - right,
                  area.height() - top - bottom)
    times = [max(p.ms_per_query, 1e-4) for p in view.points] or [1.0]
    maps = [p.map_percent for p in view.points]
    exact = view.exact_percent
    ys = [*maps, *([exact] if exact is not None else [])] or [0.0, 100.0]
    lo_x, hi_x = math.log10(min(times)), math.log10(max(times))
    if hi_x - lo_x < 0.3:
        lo_x, hi_x = lo_x - 0.3, hi_x + 0.3
    pad_x = 0.08 * (hi_x - lo_x)
    lo_x, hi_x = lo_x - pad_x, hi_x + pad_x
    lo_y, hi_y = min(ys), max(ys)
    span = max(hi_y - lo_y, 2.0)
    lo_y, hi_y = max(0.0, lo_y - 0.15 * span), min(100.0, hi_y + 0.15 * span)

    def at(ms: float, m: float) -> QPointF:
        x = plot.left() + (math.log10(max(ms, 1e-4)) - lo_x) / (hi_x - lo_x) * plot.width()
        y = plot.bottom() - (m - lo_y) / (hi_y - lo_y) * plot.height()
        return QPointF(x, y)

    painter.setPen(QPen(_GRID, 0.6))
    for tick in _ticks(lo_y, hi_y):
        y = at(times[0], tick).y()
        painter.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
        painter.setPen(_INK)
        painter.drawText(QRectF(area.left(), y - 8, left - 6, 16),
                         Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                         f"{tick:g}")
        painter.setPen(QPen(_GRID, 0.6))
    last_label = -1e9
    for exponent in range(math.floor(lo_x), math.ceil(hi_x) + 1):
        for mult in (1, 2, 5) if hi_x - lo_x > 1.2 else range(1, 10):
            value = mult * 10.0 ** exponent
            if not lo_x <= math.log10(value) <= hi_x:
                continue
            x = at(value, lo_y).x()
            painter.setPen(QPen(_GRID, 0.6))
            painter.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()))
            if x - last_label < 36:  # too close to the last label to read
                continue
            last_label = x
            painter.setPen(_INK)
            painter.drawText(QRectF(x - 30, plot.bottom() + 3, 60, 14),
                             Qt.AlignmentFlag.AlignHCenter, f"{value:g}")
    painter.setPen(QPen(_INK, 1.0))
    painter.drawRect(plot)
    painter.drawText(QRectF(plot.left(), area.bottom() - 22, plot.width(), 16),
                     Qt.AlignmentFlag.AlignHCenter,
                     "search time per query (ms, log scale)")
    painter.save()
    painter.translate(area.left() + 14, plot.center().y())
    painter.rotate(-90)
    painter.drawText(QRectF(-plot.height() / 2, -8, plot.height(), 16),
                     Qt.AlignmentFlag.AlignHCenter, view.y_label)
    painter.restore()
    if title:
        bold = QFont(font)
        bold.setBold(True)
        painter.setFont(bold)
        painter.drawText(QRectF(area.left(), area.top() + 6, area.width(), 18),
                         Qt.AlignmentFlag.AlignHCenter, title)
        painter.setFont(font)
    if exact is not None:
        pen = QPen(_EXACT, 1.2, Qt.PenStyle.DashLine)
        painter.setPen(pen)
        y = at(times[0], exact).y()
        painter.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
        painter.drawText(QRectF(plot.left() + 4, y - 15, plot.width() - 8, 14),
                         Qt.AlignmentFlag.AlignLeft, view.exact_label)
    points = [at(t, m) for t, m in zip(times, maps, strict=True)]
    painter.setPen(QPen(_CURVE, 1.6))
    for a, b in itertools.pairwise(points):
        painter.drawLine(a, b)
    painter.setBrush(_CURVE)
    for s, p in zip(view.points, points, strict=True):
        painter.setPen(QPen(_CURVE, 1.0))
        painter.drawEllipse(p, 3.2, 3.2)
        painter.setPen(_INK)
        label = s.label
        width = painter.fontMetrics().horizontalAdvance(label) + 4
        x = p.x() + 5 if p.x() + 5 + width <= plot.right() else p.x() - 5 - width
        painter.drawText(QRectF(x, p.y() + 2, width, 14), Qt.AlignmentFlag.AlignLeft, label)
    painter.restore()


def _ticks(lo: float, hi: float) -> list[float]:
    raw = (hi - lo) / 5
    step = min((s for s in (0.5, 1, 2, 5, 10, 20) if s >= raw), default=20)
    first = math.ceil(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step) + 1)]


class SweepFigure(QWidget):
    """The sweep figure as a widget (the window's sweep dialog)."""

    def __init__(self, view: SweepView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.view = view
        self.setMinimumSize(480, 300)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """Return the figure's natural size."""
        return SIZE

    def paintEvent(self, _event: object) -> None:  # noqa: N802 - Qt's name
        """Paint the figure over the whole widget, a point the screen's size of a point
        (as the exported figure reads when printed)."""
        painter = QPainter(self)
        scale = self.logicalDpiY() / 72
        painter.scale(scale, scale)
        rect = QRectF(self.rect())
        paint_sweep(painter, QRectF(0, 0, rect.width() / scale, rect.height() / scale),
                    self.view)
        painter.end()


def export_sweep(view: SweepView, path: Path) -> None:
    """Write the sweep figure to ``path`` as PDF, SVG or PNG by its suffix
    (:func:`irviewer.gui.figure_writer.write_figure`); InputError for another suffix or a
    file that cannot be written."""
    area = QRectF(0, 0, SIZE.width(), SIZE.height())
    write_figure(Path(path), SIZE.width(), SIZE.height(),
                 lambda painter: paint_sweep(painter, area, view),
                 view.title or "irviewer sweep",
                 "mAP against search time per query, one point per setting")


__all__ = ["SweepFigure", "export_sweep", "paint_sweep"]
