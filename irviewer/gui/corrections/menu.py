"""The correction entries of a result tile's menu (right-click, in the results, the missed
positives and the comparison window) and the "Relabel this image…" dialog. What they offer comes
from :mod:`irviewer.view.corrections` (the family's groups as the corrected ground truth has
them, the relabel offer and its preview); choosing calls back, and the window makes the
correction."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QWidget,
)

from irviewer.core.dataset import Dataset
from irviewer.view.corrections import RelabelOffer, RelationMenu, relabel_preview


def add_correction_entries(menu: QMenu, entries: RelationMenu, offer: RelabelOffer | None,
                           reason: str, set_relation: Callable[[str], None],
                           relabel: Callable[[RelabelOffer], None]) -> None:
    """Add to ``menu`` the corrections of one tile: a section titled as ``entries`` says
    (which ground truth a choice edits), in the published view a disabled line saying what
    the published labels say, one entry per relation of the family (key 1–4, the corrected
    relation checked), and "Relabel this image…" when there is an ``offer``; with no
    choices (HPatches), one disabled line saying why (``reason``)."""
    menu.addSection(entries.title)
    if not entries.choices:
        menu.addAction(reason or "cannot be corrected").setEnabled(False)
        return
    if entries.note:
        menu.addAction(entries.note).setEnabled(False)
    for choice in entries.choices:
        action = QAction(f"&{choice.key}  {choice.text}", menu)
        action.setShortcut(QKeySequence(choice.key))
        action.setCheckable(True)
        action.setChecked(choice.current)
        action.triggered.connect(lambda _=False, label=choice.label: set_relation(label))
        menu.addAction(action)
    if offer is not None:
        menu.addSeparator()
        action = menu.addAction(f"Relabel this image… (now {offer.current})")
        action.setToolTip("Change the image's label for every query")
        action.triggered.connect(lambda _=False: relabel(offer))


class RelabelDialog(QDialog):
    """Relabel one image for every query: the new label (the query's offered first, any
    label of the dataset picked or typed), a note, and — before applying — how many queries
    it changes."""

    def __init__(self, parent: QWidget, dataset: Dataset, offer: RelabelOffer) -> None:
        super().__init__(parent)
        self.dataset, self.offer = dataset, offer
        self.setWindowTitle("Relabel this image — irviewer")
        self.label_box = QComboBox()
        self.label_box.setEditable(True)
        self.label_box.addItems(list(offer.labels))
        self.label_box.setCurrentText(offer.query_label or offer.current)
        self.note_edit = QLineEdit()
        self.note_edit.setPlaceholderText("why (optional): written in the corrections file")
        self.preview = QLabel("")
        self.preview.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                        | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Relabel")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        form = QFormLayout(self)
        form.addRow("Image:", QLabel(f"<b>{offer.item}</b> (label now {offer.current})"))
        form.addRow("New label:", self.label_box)
        form.addRow("", QLabel(f"the query's label is <b>{offer.query_label}</b>"))
        form.addRow("Note:", self.note_edit)
        form.addRow("Effect:", self.preview)
        form.addRow(self.buttons)
        self.label_box.currentTextChanged.connect(self._update_preview)
        self._update_preview(self.label_box.currentText())

    def new_label(self) -> str:
        """Return the label chosen or typed."""
        return self.label_box.currentText().strip()

    def note(self) -> str:
        """Return the note typed."""
        return self.note_edit.text().strip()

    def _update_preview(self, text: str) -> None:
        n, sentence = relabel_preview(self.dataset, self.offer.item, text.strip())
        self.preview.setText(sentence)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(bool(n))
