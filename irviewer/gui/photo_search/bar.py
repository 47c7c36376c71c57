"""The bar above the inspector's results while a visitor's photo is shown there."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QWidget

from irviewer.view import palette


class PhotoBar(QWidget):
    """Above the inspector's results while a photo is shown: what it is, the "This is…"
    picker, and the way back to the queries; ``instance_chosen(label or None)`` when the
    user says which painting it is, ``back()`` for the way back."""

    instance_chosen = Signal(object)
    back = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.label = QLabel("")
        self.picker = QComboBox()
        self.picker.setMinimumWidth(320)
        self.picker.setToolTip("Say which painting the photo shows to colour its matches")
        self.picker.activated.connect(
            lambda i: self.instance_chosen.emit(self.picker.itemData(i)))
        self.back_button = QPushButton("Back to the queries")
        self.back_button.clicked.connect(self.back)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        layout.addWidget(self.label, 1)
        layout.addWidget(QLabel("This is"))
        layout.addWidget(self.picker)
        layout.addWidget(self.back_button)
        self.setStyleSheet(f"PhotoBar {{ background: {palette.PHOTO_BAR_BACKGROUND}; border: 1px "
                           f"solid {palette.SELECTED}; }}")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground)
        self.setVisible(False)

    def show_photo(self, text: str, instances: dict[str, str], instance: str | None) -> None:
        """Show the bar saying ``text``, the picker offering ``instances`` (label: title)
        with ``instance`` chosen (None: not said)."""
        self.label.setText(text)
        self.picker.clear()
        self.picker.addItem("…which painting? (not said)", None)
        for label, title in instances.items():
            self.picker.addItem(title, label)
        self.picker.setCurrentIndex(max(0, self.picker.findData(instance))
                                    if instance is not None else 0)
        self.picker.setEnabled(bool(instances))
        self.setVisible(True)
