"""File ▸ Open: one dialog for a dataset, the methods to inspect it with (descriptor files
and precomputed rankings) and the reader options, returning an :class:`OpenRequest`."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from irviewer.core.errors import OPTION_LABELS
from irviewer.core.protocols import PROTOCOLS
from irviewer.formats.registry import readers
from irviewer.opening.opener import OpenRequest, classify_paths

DETECT = "detect from the files"

#: The dialog's field labels by option name: the reader options' labels are the ones
#: messages use ("give “Row names” in the Open dialog", :data:`OPTION_LABELS`).
FIELD_LABELS = {
    "dataset": "Dataset",
    "methods": "Descriptors or rankings",
    **{key: label for key, (_flag, label) in OPTION_LABELS.items()},
}


def _path_or_none(edit: QLineEdit) -> Path | None:
    text = edit.text().strip()
    return Path(text) if text else None


def _path_row(edit: QLineEdit, *buttons: QPushButton) -> QWidget:
    row = QWidget()
    layout = QHBoxLayout(row)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(edit, 1)
    for button in buttons:
        layout.addWidget(button)
    return row


class OpenDialog(QDialog):
    """Choose a dataset, one or more descriptor files or rankings, and reader options."""

    def __init__(self, parent: QWidget | None = None,
                 initial: OpenRequest | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Open a dataset — irviewer")
        self.resize(680, 520)
        self.dataset = QLineEdit()
        self.dataset.setPlaceholderText("manifest .csv, gt_files folder, gnd_*.pkl, "
                                        ".benchmark, re-id or Holidays folder…")
        file_button, folder_button = QPushButton("File…"), QPushButton("Folder…")
        file_button.clicked.connect(lambda: self._choose_dataset(folder=False))
        folder_button.clicked.connect(lambda: self._choose_dataset(folder=True))
        self.methods = QListWidget()
        self.methods.setToolTip("Each file is one method: a descriptor file is ranked by "
                                "cosine similarity, a ranking file is scored as it is.")
        add, add_folder, remove = (QPushButton("Add files…"), QPushButton("Add folder…"),
                                   QPushButton("Remove"))
        add.clicked.connect(self._add_methods)
        add_folder.clicked.connect(self._add_method_folder)
        remove.clicked.connect(lambda: [self.methods.takeItem(self.methods.row(i))
                                        for i in self.methods.selectedItems()])
        method_buttons = QVBoxLayout()
        for button in (add, add_folder, remove):
            method_buttons.addWidget(button)
        method_buttons.addStretch(1)
        method_row = QHBoxLayout()
        method_row.addWidget(self.methods, 1)
        method_row.addLayout(method_buttons)
        self.images = QLineEdit()
        self.images.setPlaceholderText("optional: the folder with the image files")
        images_button = QPushButton("Folder…")
        images_button.clicked.connect(self._choose_images)
        self.format = QComboBox()
        self.format.addItem(DETECT, None)
        for reader in readers():
            self.format.addItem(f"{reader.name} — {reader.description}", reader.name)
        self.instance_rule = QLineEdit()
        self.instance_rule.setPlaceholderText("instance sets named by file: dash, underscore2 "
                                              "or a regular expression")
        self.row_names = QLineEdit()
        self.row_names.setPlaceholderText("optional: a text file naming the descriptor rows, "
                                          "one image per line")
        self.row_names.setToolTip("For descriptor files without names (.fvecs, .npy): which "
                                  "image each row is (eval --row-names)")
        row_names_button = QPushButton("File…")
        row_names_button.clicked.connect(lambda: self._choose_file(self.row_names,
                                                                   "Row names"))
        self.distractors = QLineEdit()
        self.distractors.setPlaceholderText("optional: a text file of extra gallery names")
        self.distractors.setToolTip("Extra gallery images, e.g. the revisited 1M distractors "
                                    "(eval --distractors)")
        distractors_button = QPushButton("File…")
        distractors_button.clicked.connect(lambda: self._choose_file(self.distractors,
                                                                     "Distractors"))
        self.ignore_labels = QLineEdit()
        self.ignore_labels.setPlaceholderText("optional: instance labels that take no part, "
                                              "separated by commas")
        self.ignore_labels.setToolTip("Images of these instance labels take no part: such "
                                      "queries are removed, such gallery images ignored "
                                      "(eval --ignore-label)")
        self.protocol = QComboBox()
        self.protocol.addItem("the dataset's own", None)
        for name in PROTOCOLS:
            self.protocol.addItem(name, name)
        self.protocol.setToolTip("The protocol to score with (eval --protocol); the dataset's "
                                 "own protocols when not chosen")
        self.keep_orphans = QCheckBox("Keep queries whose instance has no gallery image")
        self.message = QLabel("")
        self.message.setStyleSheet("color: #D55E00")
        self.message.setWordWrap(True)
        form = QFormLayout()
        form.addRow(FIELD_LABELS["dataset"] + ":", _path_row(self.dataset, file_button,
                                                             folder_button))
        form.addRow(FIELD_LABELS["methods"] + ":", method_row)
        form.addRow(FIELD_LABELS["images"] + ":", _path_row(self.images, images_button))
        form.addRow(FIELD_LABELS["row_names"] + ":", _path_row(self.row_names,
                                                               row_names_button))
        form.addRow(FIELD_LABELS["format"] + ":", self.format)
        form.addRow(FIELD_LABELS["protocol"] + ":", self.protocol)
        form.addRow(FIELD_LABELS["instance_rule"] + ":", self.instance_rule)
        form.addRow(FIELD_LABELS["ignore_labels"] + ":", self.ignore_labels)
        form.addRow(FIELD_LABELS["distractors"] + ":", _path_row(self.distractors,
                                                                 distractors_button))
        form.addRow(FIELD_LABELS["keep_orphans"] + ":", self.keep_orphans)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Open
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form, 1)
        layout.addWidget(self.message)
        layout.addWidget(buttons)
        self._initial = OpenRequest(Path())  # what the fields do not show (depth, corrections)
        if initial is not None:
            self.set_request(initial)

    def set_request(self, request: OpenRequest) -> None:
        """Fill the fields from ``request``."""
        self.dataset.setText(str(request.dataset))
        self.methods.clear()
        self.methods.addItems([str(p) for p in request.sources()])
        self._initial = request
        o = request.options
        self.images.setText(str(o.images) if o.images else "")
        i = self.format.findData(request.format)
        self.format.setCurrentIndex(max(0, i))
        self.protocol.setCurrentIndex(max(0, self.protocol.findData(request.protocol)))
        self.instance_rule.setText(o.instance_rule or "")
        self.row_names.setText(str(o.row_names) if o.row_names else "")
        self.distractors.setText(str(o.distractors) if o.distractors else "")
        self.ignore_labels.setText(", ".join(o.ignore_labels))
        self.keep_orphans.setChecked(not o.drop_orphans)

    def request(self) -> OpenRequest | None:
        """Return the request the fields describe, or None with a message shown."""
        dataset = self.dataset.text().strip()
        sources = [Path(self.methods.item(i).text()) for i in range(self.methods.count())]
        if not dataset:
            self.message.setText("Choose the dataset: its ground truth file or folder.")
            return None
        if not sources:
            self.message.setText("Add at least one descriptor file or precomputed ranking.")
            return None
        roles = classify_paths(sources)
        options = replace(self._initial.options, images=_path_or_none(self.images),
                          instance_rule=self.instance_rule.text().strip() or None,
                          row_names=_path_or_none(self.row_names),
                          distractors=_path_or_none(self.distractors),
                          ignore_labels=tuple(label.strip() for label in
                                              self.ignore_labels.text().split(",")
                                              if label.strip()),
                          drop_orphans=not self.keep_orphans.isChecked(), gallery_names=None)
        return replace(self._initial, dataset=Path(dataset),
                       descriptors=(*roles.descriptors, *roles.datasets),
                       rankings=roles.rankings, format=self.format.currentData(),
                       options=options, protocol=self.protocol.currentData())

    def _accept(self) -> None:
        if self.request() is not None:
            self.accept()

    def _choose_dataset(self, folder: bool) -> None:
        path = (QFileDialog.getExistingDirectory(self, "Dataset folder") if folder else
                QFileDialog.getOpenFileName(self, "Dataset file")[0])
        if path:
            self.dataset.setText(path)

    def _add_methods(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(
            self, "Descriptor files or rankings",
            filter="Descriptors and rankings (*.npz *.npy *.fvecs *.mat *.h5 *.hdf5 *.run "
                   "*.trec *.results *.txt);;All files (*)")
        self.methods.addItems(paths)

    def _add_method_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "hpatches-benchmark descriptor folder")
        if path:
            self.methods.addItem(path)

    def _choose_file(self, edit: QLineEdit, title: str) -> None:
        path, _ = QFileDialog.getOpenFileName(self, title)
        if path:
            edit.setText(path)

    def _choose_images(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Image folder")
        if path:
            self.images.setText(path)
