"""Presentation mode's slide: full screen, dark, the query large and its top
matches large
with title and artist, no tables and no numbers unless asked (M), relevance frames on R,
←/→ and Page Up/Down (what presentation clickers send) between queries in the inspector's
order and filter, a slideshow on S, a visitor's photo on O or by drop, Esc back to the
inspector on the same query. It paints a :class:`~irviewer.view.presentation.Slide`, built
from the inspector's own result view model; images are decoded off the GUI thread by a
:class:`~irviewer.gui.widgets.thumbnails.ThumbnailCache` at a large size."""

from __future__ import annotations

import math
from pathlib import Path

from PySide6.QtCore import QEvent, QRect, QRectF, QSettings, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QDragEnterEvent,
    QDropEvent,
    QFont,
    QFontMetrics,
    QImage,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
    QShowEvent,
)
from PySide6.QtWidgets import QWidget

from irviewer.gui.theme import RELEVANCE
from irviewer.gui.widgets.thumbnails import BROKEN, ThumbnailCache
from irviewer.opening.request import classify_paths
from irviewer.view import palette
from irviewer.view.presentation import (
    DEFAULT_INTERVAL_S,
    DEFAULT_TOP_N,
    INTERVAL_RANGE_S,
    TOP_N_RANGE,
    Caption,
    Slide,
)

#: Longest side the presentation decodes images at (sharp on a 1920 × 1080 screen).
DECODE_SIZE = 1280
#: The pointer hides after resting this long (milliseconds).
CURSOR_REST_MS = 2000
BACKGROUND = palette.SLIDE_BACKGROUND
TEXT = palette.SLIDE_TEXT
DIM = palette.SLIDE_DIM
FAINT = palette.SLIDE_FAINT
KEYS_HINT = ("← →  previous / next     S  slideshow     M  numbers     R  frames     "
             "O  search with a photo     Esc  back to the inspector")


def presentation_settings(settings: QSettings) -> tuple[int, int]:
    """Return (matches shown, slideshow seconds) from the user's settings (defaults when
    unset or out of range)."""
    def read(key: str, default: int, bounds: tuple[int, int]) -> int:
        try:
            raw = settings.value(key, default)
            value = int(raw) if isinstance(raw, int | float | str) else default
        except (TypeError, ValueError):
            return default
        return value if bounds[0] <= value <= bounds[1] else default
    return (read("presentation/top_n", DEFAULT_TOP_N, TOP_N_RANGE),
            read("presentation/interval_s", DEFAULT_INTERVAL_S, INTERVAL_RANGE_S))


class PresentationView(QWidget):
    """The full-screen slide. Signals: ``step(int)`` (±1: next / previous query),
    ``leave()`` (Esc), ``photo_requested()`` (O) and ``photo_dropped(path)``. A photo's
    slide says irviewer's answer under the photo, as a statement (its caption)."""

    step = Signal(int)
    leave = Signal()
    photo_requested = Signal()
    photo_dropped = Signal(object)

    def __init__(self, parent: QWidget | None = None, interval_s: int = DEFAULT_INTERVAL_S
                 ) -> None:
        super().__init__(parent)
        self.setWindowFlag(Qt.WindowType.Window)
        self.setWindowTitle("irviewer — presentation")
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setAcceptDrops(True)
        self.setAutoFillBackground(True)
        background = self.palette()
        background.setColor(self.backgroundRole(), QColor(BACKGROUND))
        self.setPalette(background)
        self.cache = ThumbnailCache(size=DECODE_SIZE, capacity=80)
        self.cache.ready.connect(lambda _name: self.update())
        self.slide: Slide | None = None
        self.position = ""  # "3 / 22", shown with the numbers
        self.show_metrics = False
        self.show_frames = True
        self.hint = KEYS_HINT  # the keys the footer names (fewer in kiosk mode)
        self.timer = QTimer(self)
        self.timer.setInterval(1000 * interval_s)
        self.timer.timeout.connect(lambda: self.step.emit(1))
        # The pointer hides when it rests (nobody wants an arrow over the Mona Lisa) and
        # comes back when the mouse moves.
        self.setMouseTracking(True)
        self.rest = QTimer(self)
        self.rest.setSingleShot(True)
        self.rest.setInterval(CURSOR_REST_MS)
        self.rest.timeout.connect(lambda: self.setCursor(Qt.CursorShape.BlankCursor))

    # -- what is shown ---------------------------------------------------------------------
    def show_slide(self, slide: Slide, position: str = "") -> None:
        """Paint ``slide`` (a query's, or a visitor's photo's with irviewer's answer)."""
        self.slide, self.position = slide, position
        self.update()

    def load_now(self) -> None:
        """Decode the slide's images on this thread (for --screenshot and tests)."""
        if self.slide is not None:
            self.cache.load_now([("query:" + str(self.slide.query_path), self.slide.query_path),
                                 *((t.name, t.path) for t in self.slide.tiles)])
            self.update()

    @property
    def slideshow(self) -> bool:
        """Return whether the slideshow runs."""
        return self.timer.isActive()

    def set_slideshow(self, on: bool) -> None:
        """Start or stop the slideshow (S)."""
        if on:
            self.timer.start()
        else:
            self.timer.stop()
        self.update()

    def set_interval(self, seconds: float) -> None:
        """Move to the next slide every ``seconds`` while the slideshow runs."""
        self.timer.setInterval(max(50, int(1000 * seconds)))

    def interval(self) -> float:
        """Return the slideshow's seconds per slide."""
        return self.timer.interval() / 1000

    def _left_width(self) -> int:
        """Return the width of the query's column (its image and caption)."""
        return round((self.width() - 3 * self._margin()) * 0.42)

    # -- keys and drops --------------------------------------------------------------------
    def event(self, event: QEvent) -> bool:
        """The slide's keys win over the inspector's shortcuts (Esc, F11, the arrows)."""
        if isinstance(event, QKeyEvent) and event.type() == QEvent.Type.ShortcutOverride \
                and event.modifiers() in (
                Qt.KeyboardModifier.NoModifier, Qt.KeyboardModifier.KeypadModifier):
            event.accept()
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        key = event.key()
        k = Qt.Key
        if key in (k.Key_Right, k.Key_PageDown, k.Key_Down, k.Key_Space):
            self.step.emit(1)
        elif key in (k.Key_Left, k.Key_PageUp, k.Key_Up, k.Key_Backspace):
            self.step.emit(-1)
        elif key == k.Key_M:
            self.show_metrics = not self.show_metrics
            self.update()
        elif key == k.Key_R:
            self.show_frames = not self.show_frames
            self.update()
        elif key == k.Key_S:
            self.set_slideshow(not self.slideshow)
        elif key == k.Key_O:
            self.photo_requested.emit()
        elif key in (k.Key_Escape, k.Key_F11):
            self.leave.emit()
        else:
            super().keyPressEvent(event)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802
        paths = [Path(u.toLocalFile()) for u in event.mimeData().urls() if u.isLocalFile()]
        images = classify_paths(paths).images
        if images:
            event.acceptProposedAction()
            self.photo_dropped.emit(images[0])

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802
        self.rest.start()
        super().showEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        self.unsetCursor()
        self.rest.start()
        super().mouseMoveEvent(event)

    # -- painting --------------------------------------------------------------------------
    def _margin(self) -> int:
        return max(20, round(self.height() * 0.045))

    def _footer(self) -> int:
        return max(18, round(self.height() * 0.03))

    def _font(self, fraction: float, bold: bool = False, serif: bool = False) -> QFont:
        font = QFont("serif") if serif else QFont(self.font())
        font.setPixelSize(max(10, round(self.height() * fraction)))
        font.setBold(bold)
        return font

    def paintEvent(self, _event: QPaintEvent) -> None:  # noqa: N802
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        painter.fillRect(self.rect(), QColor(BACKGROUND))
        if self.slide is not None:
            self._paint_slide(painter, self.slide)
        painter.end()

    def _paint_slide(self, p: QPainter, slide: Slide) -> None:
        w, h, m, footer = self.width(), self.height(), self._margin(), self._footer()
        label_font = self._font(0.017)
        label_h = QFontMetrics(label_font).height() + round(h * 0.012)
        left_w = self._left_width()
        # The query: its label, the image, its title and artist (numbers on M).
        p.setFont(label_font)
        p.setPen(QColor(DIM))
        p.drawText(QRect(m, m, left_w, label_h), int(Qt.AlignmentFlag.AlignLeft),
                   "YOUR PHOTO" if slide.query is None else slide.query_label)
        caption_h = round(h * 0.15) + (round(h * 0.03) if self.show_metrics else 0)
        image_box = QRect(m, m + label_h, left_w, h - 2 * m - label_h - caption_h - footer)
        drawn = self._image(p, "query:" + str(slide.query_path), slide.query_path, image_box,
                            centre=False, top=True)
        top = drawn.bottom() + round(h * 0.025)
        top = self._caption(p, slide.query_caption, QRect(m, top, left_w, caption_h),
                            0.036, 0.024)
        if self.show_metrics and slide.metrics:
            p.setFont(self._font(0.019))
            p.setPen(QColor(DIM))
            p.drawText(QRect(m, top + round(h * 0.01), left_w, round(h * 0.03)),
                       int(Qt.AlignmentFlag.AlignLeft), slide.metrics)
        # The matches, best first, in the grid that makes them largest.
        x0 = 2 * m + left_w
        right = QRect(x0, m, w - x0 - m, h - 2 * m - footer)
        p.setFont(label_font)
        p.setPen(QColor(DIM))
        p.drawText(QRect(right.left(), m, right.width(), label_h),
                   int(Qt.AlignmentFlag.AlignLeft),
                   slide.matches_heading or (slide.matches_label if slide.tiles
                                             else "NO MATCHES"))
        self._matches(p, slide, right.adjusted(0, label_h, 0, 0))
        # The footer: the keys, the slideshow, the position (with the numbers).
        p.setFont(self._font(0.014))
        p.setPen(QColor(FAINT))
        band = QRect(m, h - m // 2 - footer, w - 2 * m, footer)
        p.drawText(band, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                   self.hint)
        status = []
        if self.slideshow:
            status.append(f"slideshow every {self.timer.interval() / 1000:g} s")
        if self.show_metrics and self.position:
            status.append(self.position)
        p.drawText(band, int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter),
                   "   ·   ".join(status))

    def _matches(self, p: QPainter, slide: Slide, area: QRect) -> None:
        n = len(slide.tiles)
        if not n:
            return
        h = self.height()
        gap = round(h * 0.03)
        numbers = self.show_metrics and slide.tile_numbers  # "#1 score 0.051" under each
        cap_h = round(h * 0.12) + (round(h * 0.025) if numbers else 0)
        best = (0.0, 1)
        for cols in range(1, n + 1):
            rows = math.ceil(n / cols)
            cell_w = (area.width() - (cols - 1) * gap) / cols
            cell_h = (area.height() - (rows - 1) * gap) / rows
            side = min(cell_w, (cell_h - cap_h) * 1.15)
            best = max(best, (side, cols))
        cols = best[1]
        rows = math.ceil(n / cols)
        cell_w = (area.width() - (cols - 1) * gap) // cols
        cell_h = (area.height() - (rows - 1) * gap) // rows
        # Every image of a row starts at the row's top (the top row level with the query),
        # and the row's captions start together under its tallest image.
        image_h = [0] * rows
        for i, tile in enumerate(slide.tiles):
            size = self._fitted(tile.name, tile.path, QSize(cell_w - 16, cell_h - cap_h - 16))
            image_h[i // cols] = max(image_h[i // cols], size.height())
        for i, (tile, cap) in enumerate(zip(slide.tiles, slide.captions, strict=True)):
            row, col = divmod(i, cols)
            in_row = min(cols, n - row * cols)  # a short last row is centred
            x = area.left() + (area.width() - in_row * cell_w - (in_row - 1) * gap) // 2 \
                + col * (cell_w + gap)
            y = area.top() + row * (cell_h + gap)
            box = QRect(x + 8, y + 8, cell_w - 16, image_h[row] or cell_h - cap_h - 16)
            drawn = self._image(p, tile.name, tile.path, box, top=True)
            if self.show_frames and slide.judged:
                colour, glyph, _ = RELEVANCE[tile.badge]
                p.setPen(QPen(QColor(colour), max(4, round(h * 0.006))))
                p.setBrush(Qt.BrushStyle.NoBrush)
                p.drawRect(drawn.adjusted(-5, -5, 5, 5))
                d = max(22, round(h * 0.03))
                badge = QRectF(drawn.left() - 5 - d / 2, drawn.top() - 5 - d / 2, d, d)
                p.setPen(QPen(QColor(BACKGROUND), 2))
                p.setBrush(QColor(colour))
                p.drawEllipse(badge)
                p.setPen(QColor(palette.WHITE))
                p.setFont(self._font(0.02, bold=True))
                p.drawText(badge, int(Qt.AlignmentFlag.AlignCenter), glyph)
            text_x = min(drawn.left(), x + cell_w // 4)  # under the image, from its edge
            bottom = self._caption(p, cap, QRect(text_x, box.bottom() + round(h * 0.016),
                                                 x + cell_w - text_x, cap_h), 0.02, 0.016,
                                   lines=3)
            if numbers:
                score = "" if math.isnan(tile.score) else f"   score {tile.score:.3f}"
                p.setFont(self._font(0.016))
                p.setPen(QColor(DIM))
                p.drawText(QRect(text_x, bottom + 2, cell_w, round(h * 0.025)),
                           int(Qt.AlignmentFlag.AlignLeft), f"#{tile.rank}{score}")

    def _caption(self, p: QPainter, cap: Caption, rect: QRect, title_size: float,
                 artist_size: float, lines: int = 3) -> int:
        """Draw the work's title (wrapped on at most ``lines`` lines, the last elided),
        the artist under it and the details under that; return the y where the text
        ends."""
        title_font = self._font(title_size, serif=True)
        p.setFont(title_font)
        p.setPen(QColor(TEXT))
        fm = QFontMetrics(title_font)
        y = rect.top()
        for line in wrapped(fm, cap.title, rect.width(), lines):
            p.drawText(QRect(rect.left(), y, rect.width(), fm.height()),
                       int(Qt.AlignmentFlag.AlignLeft), line)
            y += fm.lineSpacing()
        y += 2
        if cap.artist:  # wrapped too: "Jean-Honoré Fragonard" is never cut
            y = self._dim_line(p, cap.artist, artist_size, rect, y, lines=2)
        if cap.details:  # year, room, ...: smaller, under the artist
            y = self._dim_line(p, cap.details, artist_size * 0.8, rect, y)
        return y

    def _dim_line(self, p: QPainter, text: str, size: float, rect: QRect, y: int,
                  lines: int = 1) -> int:
        """Draw ``text`` dim at ``y`` in ``rect``'s width, wrapped on at most ``lines``
        lines (the last elided); return the y under it."""
        font = self._font(size)
        p.setFont(font)
        p.setPen(QColor(DIM))
        fm = QFontMetrics(font)
        for line in wrapped(fm, text, rect.width(), lines):
            p.drawText(QRect(rect.left(), y, rect.width(), fm.height()),
                       int(Qt.AlignmentFlag.AlignLeft), line)
            y += fm.height()
        return y

    def _fitted(self, key: str, path: Path | None, room: QSize) -> QSize:
        """Return the size the image takes fitted in ``room`` (a square while it loads)."""
        image = self.cache.get(key, path)
        if not isinstance(image, QImage) or image.isNull() or room.width() < 2 \
                or room.height() < 2:
            side = max(0, min(room.width(), room.height()))
            return QSize(side, side)
        scale = min(room.width() / image.width(), room.height() / image.height())
        return QSize(round(image.width() * scale), round(image.height() * scale))

    def _image(self, p: QPainter, key: str, path: Path | None, box: QRect,
               centre: bool = True, top: bool = False) -> QRect:
        """Draw the image fitted in ``box``, on its top edge (``top``) or its bottom edge,
        centred or on the left; return the rectangle it took (a calm placeholder while it
        loads)."""
        image = self.cache.get(key, path)
        if not isinstance(image, QImage) or image.isNull() or box.width() < 2 \
                or box.height() < 2:
            side = min(box.width(), box.height())
            rect = QRect(box.left() + ((box.width() - side) // 2 if centre else 0),
                         box.top() if top else box.bottom() - side, side, side)
            p.fillRect(rect, QColor(palette.SLIDE_PANEL))
            if image == BROKEN or image is None:
                p.setPen(QColor(FAINT))
                p.setFont(self._font(0.016))
                p.drawText(rect, int(Qt.AlignmentFlag.AlignCenter),
                           "image could not be read" if image == BROKEN else "no image")
            return rect
        scale = min(box.width() / image.width(), box.height() / image.height())
        iw, ih = round(image.width() * scale), round(image.height() * scale)
        x = box.left() + ((box.width() - iw) // 2 if centre else 0)
        rect = QRect(x, box.top() if top else box.bottom() - ih, iw, ih)
        p.drawImage(rect, image)
        return rect



def wrapped(fm: QFontMetrics, text: str, width: int, max_lines: int) -> list[str]:
    """Return ``text`` broken into lines at most ``width`` pixels wide at word boundaries,
    at most ``max_lines`` of them, the last elided with "…" when the text goes on."""
    lines: list[str] = []
    words = text.split()
    while words and len(lines) < max_lines:
        line = words.pop(0)
        while words and fm.horizontalAdvance(f"{line} {words[0]}") <= width:
            line = f"{line} {words.pop(0)}"
        lines.append(line)
    if words or (lines and fm.horizontalAdvance(lines[-1]) > width):
        rest = " ".join([lines.pop(), *words]) if lines else ""
        lines.append(fm.elidedText(rest, Qt.TextElideMode.ElideRight, width))
    return lines
