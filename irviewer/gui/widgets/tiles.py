"""A grid of result tiles: thumbnail, relevance frame and badge, rank and score. Painted,
not built from item widgets, so 200 tiles redraw in a frame."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QContextMenuEvent,
    QFont,
    QFontMetrics,
    QHelpEvent,
    QImage,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
    QPolygon,
    QResizeEvent,
)
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from irviewer.gui.theme import RELEVANCE
from irviewer.gui.widgets.thumbnails import BROKEN, ThumbnailCache
from irviewer.view import palette
from irviewer.view.result_list import ResultTile, tile_caption


def score_text(tile: ResultTile) -> str:
    """Return the score as the caption shows it ("" when it is not known)."""
    return tile_caption(tile)[1]


class TileGrid(QWidget):
    """Paints :class:`~irviewer.view.result_list.ResultTile` s in rows; emits
    ``clicked(gallery index)`` on a left click and ``menu_requested(tile position, global
    point)`` on a right click (the context menu); either click selects the tile
    (``selected``, its gallery index, drawn with a ring; the keys 1–4 act on it). Resting
    the mouse on a tile shows its tooltip (name, title, rank, score) and sets ``hovered``;
    when the tiles re-flow (new tiles, another width or size) a tooltip shown names the tile
    now under the mouse. Tiles whose gallery index is in ``marked`` carry the corrected
    mark."""

    clicked = Signal(int)
    menu_requested = Signal(int, QPoint)
    GAP, FRAME, CAPTION = 8, 4, 18

    def __init__(self, cache: ThumbnailCache, tile_size: int = 132) -> None:
        super().__init__()
        self.cache, self.tile_size = cache, tile_size
        self.tiles: list[ResultTile] = []
        self.marked: frozenset[int] = frozenset()
        self.hovered: int | None = None
        self.numbers = True  # rank and score under each tile (else its title)
        self.selected: int | None = None
        self._mouse: QPoint | None = None  # where the mouse is over the grid (None: away)
        self.setMouseTracking(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum)
        cache.ready.connect(self._on_ready)

    def set_tiles(self, tiles: list[ResultTile] | tuple[ResultTile, ...]) -> None:
        """Show ``tiles`` (thumbnails load in the background); the selection stays on its
        tile when that tile is still shown."""
        self.tiles = list(tiles)
        if self.selected is not None and all(t.index != self.selected for t in self.tiles):
            self.selected = None
        self._fit_height()
        self._follow_mouse()

    def select(self, index: int | None) -> None:
        """Select the tile of gallery index ``index`` (None: none)."""
        if index != self.selected:
            self.selected = index
            self.update()

    def selected_at(self) -> int | None:
        """Return the position of the selected tile (None: none is selected)."""
        return next((i for i, t in enumerate(self.tiles) if t.index == self.selected), None)

    def set_marked(self, marked: frozenset[int]) -> None:
        """Mark the tiles of these gallery indices as corrected."""
        if marked != self.marked:
            self.marked = marked
            self.update()

    def set_numbers(self, on: bool) -> None:
        """Write each tile's rank and score under it, or its title (a curator's window:
        :func:`~irviewer.view.result_list.tile_caption`)."""
        if on != self.numbers:
            self.numbers = on
            self.update()

    def set_tile_size(self, size: int) -> None:
        """Change the tile size (the +/- keys)."""
        self.tile_size = max(64, min(320, size))
        self._fit_height()
        self._follow_mouse()

    def _fit_height(self) -> None:
        """Take exactly the height the tiles need at this width (fewer tiles: less height,
        so no blank space is left below a short list)."""
        self.setMinimumHeight(self.heightForWidth(self.width()))
        self.setMaximumHeight(self.heightForWidth(self.width()))
        self.updateGeometry()
        self.update()

    def _columns(self) -> int:
        return max(1, (self.width() - self.GAP) // (self.tile_size + self.GAP))

    def _rect(self, i: int) -> QRect:
        cols = self._columns()
        x = self.GAP + (i % cols) * (self.tile_size + self.GAP)
        y = self.GAP + (i // cols) * (self.tile_size + self.CAPTION + self.GAP)
        return QRect(x, y, self.tile_size, self.tile_size)

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(4 * (self.tile_size + self.GAP), self.heightForWidth(self.width()))

    def hasHeightForWidth(self) -> bool:  # noqa: N802
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802
        cols = max(1, (width - self.GAP) // (self.tile_size + self.GAP))
        rows = -(-len(self.tiles) // cols) if self.tiles else 1
        return self.GAP + rows * (self.tile_size + self.CAPTION + self.GAP)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        height = self.heightForWidth(self.width())
        self.setMinimumHeight(height)
        self.setMaximumHeight(height)
        super().resizeEvent(event)
        self._follow_mouse()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        small = QFont(self.font())
        small.setPointSizeF(max(7.0, small.pointSizeF() - 1))
        for i, tile in enumerate(self.tiles):
            rect = self._rect(i)
            if not rect.intersects(event.rect().adjusted(0, -40, 0, 40)):
                continue
            colour, glyph, _ = RELEVANCE[tile.badge]
            image = self.cache.get(tile.name, tile.path)
            inner = rect.adjusted(self.FRAME, self.FRAME, -self.FRAME, -self.FRAME)
            plain = not glyph  # nothing to judge it by: a thin neutral edge, no badge
            painter.fillRect(rect if not plain else rect.adjusted(
                self.FRAME - 1, self.FRAME - 1, 1 - self.FRAME, 1 - self.FRAME), QColor(colour))
            painter.fillRect(inner, QColor(palette.TILE_PAPER))
            if isinstance(image, QImage):
                scaled = image.scaled(inner.size(), Qt.AspectRatioMode.KeepAspectRatio,
                                      Qt.TransformationMode.SmoothTransformation)
                at = inner.center() - QPoint(scaled.width() // 2, scaled.height() // 2)
                painter.drawImage(at, scaled)
            else:
                painter.setPen(QColor(palette.MUTED_TEXT))
                painter.setFont(small)
                state = "broken image" if image == BROKEN else "loading…" if image is ... else ""
                box = inner.adjusted(4, 4, -4, -4)
                painter.drawText(box, int(Qt.AlignmentFlag.AlignCenter),
                                 state + "\n" + self.elided_name(tile, box.width(), small))
            if not plain:
                self._paint_badge(painter, rect, colour, glyph)
            if tile.index in self.marked:
                paint_corrected_mark(painter, rect)
            if tile.index == self.selected:
                painter.setPen(QPen(QColor(palette.SELECTED), 3))
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.drawRect(rect.adjusted(-3, -3, 3, 3))
            painter.setPen(QColor(palette.TEXT))
            painter.setFont(small)
            left, right = tile_caption(tile, self.numbers)
            caption = QRect(rect.left(), rect.bottom() + 2, rect.width(), self.CAPTION)
            if right:
                painter.drawText(caption, int(Qt.AlignmentFlag.AlignRight), right)
            left = QFontMetrics(small).elidedText(left, Qt.TextElideMode.ElideRight,
                                                  rect.width() - (44 if right else 0))
            painter.drawText(caption, int(Qt.AlignmentFlag.AlignLeft), left)
        painter.end()

    def _paint_badge(self, painter: QPainter, rect: QRect, colour: str, glyph: str) -> None:
        badge = QRect(rect.left() + 6, rect.top() + 6, 22, 22)
        painter.setPen(QPen(QColor(palette.WHITE), 2))
        painter.setBrush(QColor(colour))
        painter.drawEllipse(badge)
        painter.setPen(QColor(palette.WHITE))
        bold = QFont(self.font())
        bold.setBold(True)
        painter.setFont(bold)
        painter.drawText(badge, int(Qt.AlignmentFlag.AlignCenter), glyph)

    def elided_name(self, tile: ResultTile, width: int, font: QFont | None = None) -> str:
        """Return the tile's name fitted to ``width`` pixels: whole when it fits, else
        elided in the middle with "…" (both ends stay readable; the tooltip has it all)."""
        metrics = QFontMetrics(font if font is not None else self.font())
        return metrics.elidedText(tile.name, Qt.TextElideMode.ElideMiddle, width)

    def tile_at(self, pos: QPoint) -> int | None:
        """Return the tile position under ``pos``, or None."""
        for i in range(len(self.tiles)):
            if self._rect(i).contains(pos):
                return i
        return None

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if event.button() != Qt.MouseButton.LeftButton:
            return  # a right click asks for the context menu, it does not compare
        i = self.tile_at(event.position().toPoint())
        if i is not None and self.tiles[i].index >= 0:  # not a result outside the gallery
            self.select(self.tiles[i].index)
            self.clicked.emit(self.tiles[i].index)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:  # noqa: N802
        i = self.tile_at(event.pos())
        if i is not None:
            self.select(self.tiles[i].index)
            self.menu_requested.emit(i, event.globalPos())

    def leaveEvent(self, event: QEvent) -> None:  # noqa: N802
        self.hovered = self._mouse = None
        super().leaveEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        self._mouse = event.position().toPoint()
        i = self.tile_at(self._mouse)
        self.hovered = self.tiles[i].index if i is not None else None
        if i is None:
            QToolTip.hideText()
        elif QToolTip.isVisible():  # moving from tile to tile: the tooltip follows
            QToolTip.showText(event.globalPosition().toPoint(), self.tiles[i].tooltip(), self)

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            self._mouse = event.pos()
            i = self.tile_at(event.pos())
            if i is None:
                QToolTip.hideText()
                event.ignore()
            else:
                QToolTip.showText(event.globalPos(), self.tiles[i].tooltip(), self)
            return True
        return super().event(event)

    def _follow_mouse(self) -> None:
        """The tiles moved under a resting mouse: ``hovered`` and a tooltip shown follow
        the tile now under it (the tooltip goes when there is none)."""
        if self._mouse is None:
            return
        i = self.tile_at(self._mouse)
        self.hovered = self.tiles[i].index if i is not None else None
        if not QToolTip.isVisible():
            return
        if i is None:
            QToolTip.hideText()
        else:
            QToolTip.showText(self.mapToGlobal(self._mouse), self.tiles[i].tooltip(), self)

    def _on_ready(self, name: str) -> None:
        if any(t.name == name for t in self.tiles):
            self.update()


#: The corrected mark: a folded top-right corner, dark, with a white pencil glyph.
MARK_FILL = palette.MARK_FILL


def paint_corrected_mark(painter: QPainter, rect: QRect) -> None:
    """Paint the corrected mark on the tile ``rect``: its top-right corner folded over as a
    dark triangle carrying a white ✎ (a shape, not only a colour)."""
    size = max(28, rect.width() // 4)
    right, top = rect.right() + 1, rect.top()
    corner = QPolygon([QPoint(right - size, top), QPoint(right, top),
                       QPoint(right, top + size)])
    painter.save()
    painter.setPen(QPen(QColor(palette.WHITE), 1.5))
    painter.setBrush(QColor(MARK_FILL))
    painter.drawPolygon(corner)
    painter.setPen(QColor(palette.WHITE))
    font = QFont(painter.font())
    font.setBold(True)
    font.setPixelSize(max(11, size // 2 - 2))
    painter.setFont(font)
    glyph = QRect(right - size // 2 - 2, top + 1, size // 2, size // 2)
    painter.drawText(glyph, int(Qt.AlignmentFlag.AlignCenter), "✎")
    painter.restore()
