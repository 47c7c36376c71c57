"""The window's status bar, whose messages never run off the window: a message longer than
the room it has is elided at its end ("…"), and the whole message is the bar's tooltip.

Qt's own status bar draws a message whole and lets it be cut at the window's edge (or at
the permanent widgets: the opening's progress bar and Cancel), so the end of a long
sentence (often the part that says what to do) was lost. Every message shown with
``showMessage`` goes through here, however it is sent.
"""

from __future__ import annotations

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QPainter, QPaintEvent, QResizeEvent
from PySide6.QtWidgets import QSizeGrip, QStatusBar, QStyle, QStyleOption, QWidget

#: Pixels between the bar's edge (or a permanent widget) and the message, as Qt leaves.
MARGIN = 6


class ElidedStatusBar(QStatusBar):
    """A status bar that elides a long message and shows it whole as its tooltip."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.messageChanged.connect(lambda _text: self._fit())

    def message_rect(self) -> QRect:
        """Return where the message is drawn: from the left margin to the first permanent
        widget shown (or the size grip, or the bar's end)."""
        right = self.width() - MARGIN
        for child in self.findChildren(QWidget, options=Qt.FindChildOption.FindDirectChildrenOnly):
            if child.isVisible() and (isinstance(child, QSizeGrip)
                                      or child.geometry().left() > MARGIN):
                right = min(right, child.geometry().left() - MARGIN)
        return QRect(MARGIN, 0, max(0, right - MARGIN), self.height())

    def shown_text(self) -> str:
        """Return the message as it is drawn (elided with "…" when it does not fit)."""
        return self.fontMetrics().elidedText(self.currentMessage(), Qt.TextElideMode.ElideRight,
                                             self.message_rect().width())

    def _fit(self) -> None:
        """Make the whole message the tooltip when it is elided (none otherwise)."""
        message = self.currentMessage()
        self.setToolTip(message if message and self.shown_text() != message else "")
        self.update()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._fit()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        if not self.currentMessage():
            super().paintEvent(event)
            return
        painter = QPainter(self)
        option = QStyleOption()
        option.initFrom(self)
        self.style().drawPrimitive(QStyle.PrimitiveElement.PE_PanelStatusBar, option, painter,
                                   self)
        painter.setPen(self.palette().windowText().color())
        shown = self.shown_text()
        painter.drawText(self.message_rect(), int(Qt.AlignmentFlag.AlignLeading
                                                  | Qt.AlignmentFlag.AlignVCenter
                                                  | Qt.TextFlag.TextSingleLine), shown)
        painter.end()
        message = self.currentMessage()  # the room may have changed (a progress bar shown)
        tooltip = message if shown != message else ""
        if self.toolTip() != tooltip:
            self.setToolTip(tooltip)
