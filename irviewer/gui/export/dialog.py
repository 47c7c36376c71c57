"""The Export figure dialog: which queries, how many results, scores, the compared method
as a second row, and the file (:class:`irviewer.view.figure_request.FigureRequest`)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from irviewer.view.figure_formats import FILE_FILTER, SUFFIXES
from irviewer.view.figure_request import CHOICES, MAX_LISTED, FigureRequest


class ExportFigureDialog(QDialog):
    """The questions; :meth:`request` returns the answers."""

    def __init__(self, parent: QWidget, compared: str | None, default_path: Path) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export figure")
        self.choice = QComboBox()
        for key, words in CHOICES:
            self.choice.addItem(words, key)
        if compared is None:  # the largest changes need a compared method
            self.choice.removeItem(self.choice.findData("largest_changes"))
        self.n = QSpinBox()
        self.n.setRange(1, MAX_LISTED)
        self.n.setValue(4)
        self.top_k = QSpinBox()
        self.top_k.setRange(1, 50)
        self.top_k.setValue(8)
        self.scores = QCheckBox("Print each result's score under its tile")
        self.second_row = QCheckBox(f"{compared} as a second row per query" if compared
                                    else "a second row needs a method in Compare with")
        self.second_row.setChecked(compared is not None)
        self.second_row.setEnabled(compared is not None)
        self.path = QLineEdit(str(default_path))
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        path_row = QHBoxLayout()
        path_row.addWidget(self.path, 1)
        path_row.addWidget(browse)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Export")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form = QFormLayout(self)
        form.addRow("Queries:", self.choice)
        form.addRow("N:", self.n)
        form.addRow("Results per row:", self.top_k)
        form.addRow("", self.scores)
        form.addRow("", self.second_row)
        form.addRow(f"File ({', '.join(SUFFIXES)}):", path_row)
        form.addRow(buttons)
        self.choice.currentIndexChanged.connect(self._enable_n)
        self._enable_n()

    def request(self) -> FigureRequest:
        """Return the answers."""
        return FigureRequest(self.choice.currentData(), self.n.value(), self.top_k.value(),
                             self.scores.isChecked(), self.second_row.isChecked(),
                             Path(self.path.text().strip()).expanduser())

    def _enable_n(self, *_args: object) -> None:
        self.n.setEnabled(self.choice.currentData() in ("worst", "best", "largest_changes"))

    def _browse(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export figure", self.path.text(),
                                              FILE_FILTER)
        if path:
            self.path.setText(path)
