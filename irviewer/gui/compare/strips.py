"""Compare mode's two ranked lists of the selected query side by side: one column of tiles
per method (rank 1 on top, so a row reads "rank r here, rank r there"), each tile marked
with how far the compared method moves it ("↑3", "↓1", "=", "not in top K";
:func:`irviewer.view.compare_view.rank_marks`)."""

from __future__ import annotations

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QColor, QFont, QMouseEvent, QPainter, QPaintEvent
from PySide6.QtWidgets import QGridLayout, QLabel, QScrollArea, QToolTip, QWidget

from irviewer.gui.widgets.thumbnails import ThumbnailCache
from irviewer.gui.widgets.tiles import TileGrid
from irviewer.view import palette
from irviewer.view.compare_view import HIGHER, LOWER, RankMark
from irviewer.view.result_list import ResultTile

STRIP_TILE = 104
MARK_COLOURS = {HIGHER: palette.GAIN, LOWER: palette.LOSS}  # dark: white text stays readable


class MarkedStrip(TileGrid):
    """One column of tiles, each with its move between the two methods in a pill at its top
    right (the hover text gives the other rank in words)."""

    def __init__(self, cache: ThumbnailCache) -> None:
        super().__init__(cache, STRIP_TILE)
        self.marks: tuple[RankMark, ...] = ()
        self.setFixedWidth(STRIP_TILE + 2 * self.GAP)

    def show_marked(self, tiles: tuple[ResultTile, ...], marks: tuple[RankMark, ...]) -> None:
        """Show ``tiles`` with ``marks`` (one per tile)."""
        self.marks = marks
        self.set_tiles(tiles)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        super().paintEvent(event)
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        font = QFont(self.font())
        font.setBold(True)
        font.setPointSizeF(max(7.0, font.pointSizeF() - 1))
        painter.setFont(font)
        metrics = painter.fontMetrics()
        for i, mark in enumerate(self.marks):
            if not mark.text:
                continue
            rect = self._rect(i)
            width = metrics.horizontalAdvance(mark.text) + 10
            pill = QRect(rect.right() - width - 4, rect.top() + 6, width, metrics.height() + 4)
            if mark.other_rank is None:  # not in the other list: wrap the words to fit
                pill = QRect(rect.left() + 4, rect.bottom() - 2 * metrics.height() - 10,
                             rect.width() - 8, metrics.height() + 4)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor(MARK_COLOURS.get(mark.text[0], palette.PLOT_INK)))
            painter.drawRoundedRect(pill, 6, 6)
            painter.setPen(QColor(palette.WHITE))
            painter.drawText(pill, int(Qt.AlignmentFlag.AlignCenter), mark.text)
        painter.end()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        i = self.tile_at(event.position().toPoint())
        if i is None or i >= len(self.marks):
            super().mouseMoveEvent(event)
            return
        QToolTip.showText(event.globalPosition().toPoint(),
                          self.tiles[i].tooltip() + "\n" + self.marks[i].tooltip, self)


class CompareStrips(QScrollArea):
    """The two columns under their headers, scrolling together."""

    def __init__(self, cache: ThumbnailCache) -> None:
        super().__init__()
        self.left, self.right = MarkedStrip(cache), MarkedStrip(cache)
        self.left_title, self.right_title = QLabel(), QLabel()
        for title in (self.left_title, self.right_title):
            title.setWordWrap(True)
            title.setFixedWidth(STRIP_TILE + 2 * TileGrid.GAP)
            title.setAlignment(Qt.AlignmentFlag.AlignTop)
        body = QWidget()
        grid = QGridLayout(body)
        grid.setContentsMargins(2, 2, 2, 2)
        grid.setHorizontalSpacing(2)
        grid.addWidget(self.left_title, 0, 0)
        grid.addWidget(self.right_title, 0, 1)
        grid.addWidget(self.left, 1, 0, Qt.AlignmentFlag.AlignTop)
        grid.addWidget(self.right, 1, 1, Qt.AlignmentFlag.AlignTop)
        grid.setRowStretch(2, 1)
        self.setWidget(body)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setMinimumWidth(2 * (STRIP_TILE + 2 * TileGrid.GAP) + 30)
        self.setMaximumWidth(2 * (STRIP_TILE + 2 * TileGrid.GAP) + 30)

    def tiles(self) -> tuple[ResultTile, ...]:
        """Return the tiles both strips show, the left one's first."""
        return (*self.left.tiles, *self.right.tiles)

    def show_lists(self, titles: tuple[str, str],
                   left: tuple[tuple[ResultTile, ...], tuple[RankMark, ...]],
                   right: tuple[tuple[ResultTile, ...], tuple[RankMark, ...]]) -> None:
        """Show both methods' tiles and marks under their titles (rich text)."""
        self.left_title.setText(titles[0])
        self.right_title.setText(titles[1])
        self.left.show_marked(*left)
        self.right.show_marked(*right)
