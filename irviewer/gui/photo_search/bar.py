"""The bar above the inspector's results while a visitor's photo is shown there."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QWidget

from irviewer.core.acceptance import DEFAULT_STRICTNESS, STRICTNESS
from irviewer.view import palette


class PhotoBar(QWidget):
    """Above the inspector's results while a photo is shown: irviewer's answer, how strict
    it is, the picker that colours the matches, and the way back to the queries;
    ``strictness_chosen(name)``, ``instance_chosen(label or None)`` when the user says
    which painting it is, ``back()`` for the way back."""

    strictness_chosen = Signal(str)
    instance_chosen = Signal(object)
    back = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.label = QLabel("")
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.strictness = QComboBox()
        for name in STRICTNESS:
            self.strictness.addItem(name, name)
        self.strictness.setCurrentIndex(STRICTNESS.index(DEFAULT_STRICTNESS))
        self.strictness.setToolTip("How much evidence names an artwork: stricter names "
                                   "fewer (and fewer wrongly), looser more (docs/search.md)")
        self.strictness.activated.connect(
            lambda i: self.strictness_chosen.emit(self.strictness.itemData(i)))
        self.picker = QComboBox()
        self.picker.setMinimumWidth(240)
        self.picker.setToolTip("Say which painting the photo shows to colour its matches")
        self.picker.activated.connect(
            lambda i: self.instance_chosen.emit(self.picker.itemData(i)))
        self.back_button = QPushButton("Back to the queries")
        self.back_button.clicked.connect(self.back)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        layout.addWidget(self.label, 1)
        layout.addWidget(QLabel("Strictness"))
        layout.addWidget(self.strictness)
        self.picker_label = QLabel("Colour as")
        layout.addWidget(self.picker_label)
        layout.addWidget(self.picker)
        layout.addWidget(self.back_button)
        self.setStyleSheet(f"PhotoBar {{ background: {palette.PHOTO_BAR_BACKGROUND}; border: 1px "
                           f"solid {palette.SELECTED}; }}")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground)
        self.setVisible(False)

    def show_photo(self, text: str, instances: dict[str, str], instance: str | None,
                   evidence: str = "", judging: bool = True) -> None:
        """Show the bar saying ``text`` (``evidence`` in its tooltip), the picker offering
        ``instances`` (label: title) with ``instance`` chosen (None: not said); without
        ``judging`` (a curator's window) no picker: the matches are shown plainly."""
        for widget in (self.picker_label, self.picker):
            widget.setVisible(judging)
        self.label.setText(text)
        self.label.setToolTip(evidence)
        self.picker.clear()
        self.picker.addItem("nothing (not said)", None)
        for label, title in instances.items():
            self.picker.addItem(title, label)
        self.picker.setCurrentIndex(max(0, self.picker.findData(instance))
                                    if instance is not None else 0)
        self.picker.setEnabled(bool(instances))
        self.setVisible(True)

    def chosen_strictness(self) -> str:
        """Return the strictness chosen in the box."""
        return str(self.strictness.currentData())

    def choose_strictness(self, strictness: str) -> None:
        """Choose ``strictness`` in the box (without answering again)."""
        self.strictness.setCurrentIndex(STRICTNESS.index(strictness))
