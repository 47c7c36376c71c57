"""Query and match side by side, zoomable: where failure analysis looks closely.

Opened by clicking a result tile. Both images are decoded off the GUI thread at up to
``DETAIL`` px; the wheel zooms both views together (Ctrl+0 or "Fit" fits them again), a
drag pans, ←/→ step through the ranked results without closing the window."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

from PySide6.QtCore import QObject, QPoint, QRectF, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QContextMenuEvent,
    QImage,
    QKeySequence,
    QPainter,
    QPen,
    QPixmap,
    QShortcut,
    QWheelEvent,
)
from PySide6.QtWidgets import (
    QDialog,
    QGraphicsPixmapItem,
    QGraphicsRectItem,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
    QGraphicsView,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from irviewer.core.evaluation import IGNORED
from irviewer.core.made_images import ImageLocation
from irviewer.gui.theme import QUERY_BOX, RELEVANCE
from irviewer.gui.widgets.thumbnails import BROKEN, decode_job, decoder
from irviewer.view import palette
from irviewer.view.result_list import QueryHeader, ResultTile, relevance_words

DETAIL = 1600


@dataclass(frozen=True)
class Side:
    """One image of the comparison: its name, file, caption, frame colour and box."""

    name: str
    path: ImageLocation | None
    caption: str
    colour: str
    box: tuple[float, float, float, float] | None = None


class ZoomView(QGraphicsView):
    """A view of one image; emits ``zoomed(factor)`` for the wheel so a partner can follow."""

    zoomed = Signal(float)

    def __init__(self) -> None:
        super().__init__()
        self.setScene(QGraphicsScene(self))
        self.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setBackgroundBrush(QColor(palette.VIEWER_BACKGROUND))
        self.pixmap_item = QGraphicsPixmapItem()
        self.pixmap_item.setTransformationMode(Qt.TransformationMode.SmoothTransformation)
        self.scene().addItem(self.pixmap_item)
        self.box_item = QGraphicsRectItem()
        self.box_item.setPen(QPen(QColor(QUERY_BOX), 0))
        self.box_item.setVisible(False)
        self.scene().addItem(self.box_item)
        self.message = QGraphicsSimpleTextItem()
        self.message.setBrush(QColor(palette.VIEWER_TEXT))
        self.scene().addItem(self.message)
        self.scale_factor = 1.0

    def show_image(self, image: QImage | None, full_width: int | None,
                   box: tuple[float, float, float, float] | None, text: str = "") -> None:
        """Show ``image`` (None: ``text`` instead), with ``box`` given in the coordinates of
        the original image ``full_width`` px wide."""
        if image is None:
            self.pixmap_item.setPixmap(QPixmap())
            self.box_item.setVisible(False)
            self.message.setText(text)
            self.setSceneRect(self.message.boundingRect().adjusted(-20, -20, 20, 20))
            return
        self.message.setText("")
        self.pixmap_item.setPixmap(QPixmap.fromImage(image))
        if box is not None and full_width:
            f = image.width() / full_width
            pen = QPen(QColor(QUERY_BOX), 3)
            pen.setCosmetic(True)
            self.box_item.setPen(pen)
            self.box_item.setRect(QRectF(box[0] * f, box[1] * f, (box[2] - box[0]) * f,
                                         (box[3] - box[1]) * f))
            self.box_item.setVisible(True)
        else:
            self.box_item.setVisible(False)
        self.setSceneRect(QRectF(0, 0, image.width(), image.height()))
        self.fit()

    def fit(self) -> None:
        """Fit the whole image into the view."""
        self.fitInView(self.sceneRect(), Qt.AspectRatioMode.KeepAspectRatio)
        self.scale_factor = self.transform().m11()

    def zoom(self, factor: float) -> None:
        """Zoom by ``factor`` around the mouse (or the centre), within 1/20 to 40 times."""
        new = self.scale_factor * factor
        if 0.05 <= new <= 40:
            self.scale(factor, factor)
            self.scale_factor = new

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802
        factor = 1.25 if event.angleDelta().y() > 0 else 0.8
        self.zoom(factor)
        self.zoomed.emit(factor)


class CompareWindow(QDialog):
    """Query and one match side by side; ``step(±1)`` asks for the neighbouring result,
    ``relation_key(key)`` for the keys 1–4 (a correction of the match) and
    ``menu_requested(global point)`` for a right-click (the match's correction menu)."""

    step = Signal(int)
    relation_key = Signal(str)
    menu_requested = Signal(QPoint)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Query and match — irviewer")
        self.resize(1200, 680)
        self.views = (ZoomView(), ZoomView())
        self.captions = (QLabel(), QLabel())
        self.sides: tuple[Side, Side] | None = None
        self.decoder = decoder(self)
        self.decoder.done.connect(self._on_decoded)
        panes = QHBoxLayout()
        for view, caption in zip(self.views, self.captions, strict=True):
            caption.setTextFormat(Qt.TextFormat.RichText)
            caption.setWordWrap(True)
            pane = QVBoxLayout()
            pane.addWidget(caption)
            pane.addWidget(view, 1)
            panes.addLayout(pane, 1)
        self.views[0].zoomed.connect(self.views[1].zoom)
        self.views[1].zoomed.connect(self.views[0].zoom)
        previous = QPushButton("← Previous result")
        following = QPushButton("Next result →")
        fit = QPushButton("Fit (Ctrl+0)")
        previous.clicked.connect(lambda: self.step.emit(-1))
        following.clicked.connect(lambda: self.step.emit(1))
        fit.clicked.connect(self.fit)
        buttons = QHBoxLayout()
        buttons.addWidget(previous)
        buttons.addWidget(following)
        buttons.addStretch(1)
        buttons.addWidget(QLabel("Wheel: zoom both · drag: pan"))
        buttons.addWidget(fit)
        layout = QVBoxLayout(self)
        layout.addLayout(panes, 1)
        layout.addLayout(buttons)
        for keys, slot in (("Left", lambda: self.step.emit(-1)),
                           ("Right", lambda: self.step.emit(1)), ("Ctrl+0", self.fit)):
            QShortcut(QKeySequence(keys), self).activated.connect(slot)
        for key in ("1", "2", "3", "4"):
            QShortcut(QKeySequence(key), self).activated.connect(
                lambda k=key: self.relation_key.emit(k))

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:  # noqa: N802
        self.menu_requested.emit(event.globalPos())

    def show_pair(self, query: Side, match: Side, sync: bool = False) -> None:
        """Show ``query`` beside ``match``; images decode in the background (``sync`` for
        tests)."""
        self.sides = (query, match)
        for i, side in enumerate(self.sides):
            self.captions[i].setText(
                f'<span style="color:{side.colour}; font-weight:bold">■</span> {side.caption}')
            self.views[i].show_image(None, None, None, "loading…")
            self.decoder.run(partial(decode_job, f"{i}:{side.name}", side.path, DETAIL),
                             f"not enough memory to decode {side.name}", sync=sync)

    def fit(self) -> None:
        """Fit both images into their views."""
        for view in self.views:
            view.fit()

    def _on_decoded(self, decoded: tuple[str, tuple[QImage | str | None, int]]) -> None:
        key, (image, full_width) = decoded
        if self.sides is None:
            return
        slot, _, name = key.partition(":")
        i = int(slot)
        side = self.sides[i]
        if side.name != name:
            return  # a stale result: the user moved on
        if isinstance(image, QImage):
            self.views[i].show_image(image, full_width, side.box)
        else:
            self.views[i].show_image(None, None, None, (
                f"broken image\n{name}" if image == BROKEN else f"no image file\n{name}"))


def query_side(header: QueryHeader) -> Side:
    """Return the comparison's query side for a query header."""
    title = f"<br>{header.title}" if header.title else ""
    return Side(header.image, header.path, f"<b>query</b> {header.name}{title}", QUERY_BOX,
                header.box)


def match_side(tile: ResultTile) -> Side:
    """Return the comparison's match side for a result tile: badge, rank, score, name."""
    colour, glyph, _label = RELEVANCE[tile.badge]
    rank = f"rank {tile.rank}" if tile.rank is not None else (
        "ignored" if tile.relevance == IGNORED else "not ranked")
    score = "" if math.isnan(tile.score) else f", score {tile.score:.4f}"
    title = f"<br>{tile.title}" if tile.title else ""
    judgement = f"<b>{glyph} {relevance_words(tile)}</b>, " if glyph else ""
    return Side(tile.name, tile.path, f"{judgement}{rank}{score}<br>{tile.name}{title}",
                colour)


class CompareController(QObject):
    """Keeps the comparison window on the shown query: ``show_tile(tiles, at)`` opens it on
    ``tiles[at]``, ←/→ step through ``tiles``, and a newly shown query moves it to that
    query's first result while it is open (the same query shown again, after a correction,
    keeps the match). ``relation_key(tiles, at, key)`` and ``menu_requested(tiles, at,
    point)`` pass the window's correction requests on with the match shown."""

    relation_key = Signal(object, int, str)
    menu_requested = Signal(object, int, QPoint)

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.parent_widget = parent
        self.window: CompareWindow | None = None
        self.query: Side | None = None
        self.tiles: tuple[ResultTile, ...] = ()
        self.at: int | None = None

    def set_query(self, query: Side, tiles: tuple[ResultTile, ...],
                  missed: tuple[ResultTile, ...] = ()) -> None:
        """A query is shown; an open comparison follows a new query to its first result,
        and shows the same match again (as now scored) when the query is the same."""
        same = self.query is not None and self.query.name == query.name
        self.query = query
        if self.window is None or not self.window.isVisible():
            return
        if same and self.at is not None:
            now = {t.index: t for t in (*missed, *tiles)}
            self.show_tile(tuple(now.get(t.index, t) for t in self.tiles), self.at)
        else:
            self.show_tile(tiles, 0 if tiles else None)

    def show_tile(self, tiles: tuple[ResultTile, ...], at: int | None,
                  sync: bool = False) -> None:
        """Show the query beside ``tiles[at]`` (None: nothing to show)."""
        if at is None or self.query is None:
            return
        if self.window is None:
            self.window = CompareWindow(self.parent_widget)
            self.window.step.connect(self.step)
            self.window.relation_key.connect(
                lambda key: self.relation_key.emit(self.tiles, self.at, key))
            self.window.menu_requested.connect(
                lambda pos: self.menu_requested.emit(self.tiles, self.at, pos))
        self.tiles, self.at = tuple(tiles), at
        self.window.show_pair(self.query, match_side(self.tiles[at]), sync=sync)
        self.window.show()
        self.window.raise_()

    def step(self, step: int) -> None:
        """Show the result ``step`` places after the one shown (stays at the ends)."""
        if self.at is not None and 0 <= self.at + step < len(self.tiles):
            self.show_tile(self.tiles, self.at + step)
