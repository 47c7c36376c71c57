"""The query's image in the results area, with the benchmark's query box, scaled to the
room it has (it grows with the window)."""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPaintEvent, QPen, QPixmap
from PySide6.QtWidgets import QSizePolicy, QWidget

from irviewer.core.made_images import ImageLocation
from irviewer.gui.theme import QUERY_BOX
from irviewer.gui.widgets.thumbnails import decode_with_width
from irviewer.view import palette

#: Longest side the query image is decoded at (it is shown up to this size).
DECODE_SIZE = 768


class QueryImage(QWidget):
    """Paints one image (with a box drawn on it) as large as fits, keeping its aspect;
    a sentence instead when there is no image."""

    def __init__(self) -> None:
        super().__init__()
        self._pixmap = QPixmap()
        self._text = ""
        self.setMinimumSize(160, 160)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(320, 320)

    def pixmap(self) -> QPixmap:
        """Return the image as decoded, with the box drawn (null when there is none)."""
        return self._pixmap

    def text(self) -> str:
        """Return the sentence shown instead of an image ("" when there is an image)."""
        return self._text

    def show_image(self, name: str, path: ImageLocation | None,
                   box: tuple[float, float, float, float] | None) -> None:
        """Show the image of ``name`` at ``path`` with ``box`` (x1, y1, x2, y2 in the
        image's pixels) drawn on it."""
        image, width = decode_with_width(path, DECODE_SIZE)
        if not isinstance(image, QImage):
            self._pixmap = QPixmap()
            self._text = "broken image" if image else f"(no image)\n{name}"
            self.update()
            return
        pixmap = QPixmap.fromImage(image)
        if box is not None and width > 0:
            f = image.width() / width
            painter = QPainter(pixmap)
            painter.setPen(QPen(QColor(QUERY_BOX), max(3, round(3 * image.width() / 256))))
            painter.drawRect(QRectF(box[0] * f, box[1] * f, (box[2] - box[0]) * f,
                                    (box[3] - box[1]) * f))
            painter.end()
        self._pixmap, self._text = pixmap, ""
        self.update()

    def paintEvent(self, _event: QPaintEvent) -> None:  # noqa: N802
        painter = QPainter(self)
        if self._pixmap.isNull():
            painter.setPen(QColor(palette.MUTED_TEXT))
            painter.drawText(self.rect(), int(Qt.AlignmentFlag.AlignCenter
                                              | Qt.TextFlag.TextWordWrap), self._text)
            return
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        scaled = self._pixmap.size().scaled(self.size(), Qt.AspectRatioMode.KeepAspectRatio)
        if scaled.width() > self._pixmap.width():  # never blown up beyond the decode
            scaled = self._pixmap.size()
        x = (self.width() - scaled.width()) // 2
        painter.drawPixmap(QRectF(x, 0, scaled.width(), scaled.height()).toRect(),
                           self._pixmap)
