"""The window's one way to tell a problem: a warning box that does not block (the window
keeps working behind it) and is deleted when closed."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget


def warn(parent: QWidget | None, message: str, title: str = "irviewer") -> QMessageBox:
    """Open a non-blocking warning box saying ``message`` over ``parent``; return it."""
    box = QMessageBox(QMessageBox.Icon.Warning, title, message, parent=parent)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()
    return box
