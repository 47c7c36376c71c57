"""File ▸ Open: one dialog for a dataset, the methods to inspect it with (descriptor files
and precomputed rankings) and the reader options, returning an :class:`OpenRequest`.

The reader options' fields are built from their declaration
(:class:`irviewer.formats.base.OptionSpec` on each :class:`ReadOptions` field): a new reader
option gets its field, label, placeholder and tooltip here without an edit."""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

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

from irviewer.core.protocols import PROTOCOLS
from irviewer.formats.base import OptionSpec, ReadOptions, reader_options
from irviewer.formats.registry import readers
from irviewer.opening.options import OPTIONS
from irviewer.opening.request import OpenRequest, classify_paths
from irviewer.view import palette

DETECT = "detect from the files"
#: The vector engine's fields (the request's, and the options of the same keys).
ENGINE_FIELDS = ("engine", "collection", "engine_names")
ENGINE_PLACEHOLDERS = {
    "engine": "none; or a Milvus Lite file (gallery.db) or server (http://host:19530)",
    "collection": "the engine's collection holding the gallery",
    "engine_names": "its primary key",
}

#: The dialog's field labels by option key: the labels messages name the options by ("give
#: “Row names” in the Open dialog"), from the table of shared options.
FIELD_LABELS: dict[str, str] = {
    "dataset": "Dataset",
    "methods": OPTIONS["descriptors"].label or "",
    **{key: label for key, o in OPTIONS.items() if (label := o.label) and (
        o.reader or key in ("format", "protocol", *ENGINE_FIELDS))},
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


def option_field(spec: OptionSpec, parent: QWidget) -> QLineEdit | QCheckBox:
    """Return the input widget of a reader option: a check box for a switch, else a line
    edit (paths, a text, comma-separated words) with the option's placeholder and, as its
    tooltip, its help and flag."""
    tip = f"{spec.help[:1].upper()}{spec.help[1:]} (command line: {spec.flag})"
    widget: QLineEdit | QCheckBox
    if spec.kind == "switch":
        widget = QCheckBox(spec.check or spec.label, parent)
    else:
        widget = QLineEdit(parent)
        widget.setPlaceholderText(spec.hint)
    widget.setToolTip(tip)
    return widget


def set_field(widget: QLineEdit | QCheckBox, spec: OptionSpec, value: Any) -> None:
    """Show a reader option's ``value`` (a ReadOptions field's) in its widget."""
    if isinstance(widget, QCheckBox):
        widget.setChecked(bool(value) != spec.negate)
    elif spec.kind == "words":
        widget.setText(", ".join(value))
    else:
        widget.setText("" if value is None else str(value))


def field_value(widget: QLineEdit | QCheckBox, spec: OptionSpec) -> Any:
    """Return the ReadOptions field value a reader option's widget shows."""
    if isinstance(widget, QCheckBox):
        return widget.isChecked() != spec.negate
    if spec.kind == "words":
        return tuple(w.strip() for w in widget.text().split(",") if w.strip())
    if spec.kind in ("file", "folder"):
        return _path_or_none(widget)
    return widget.text().strip() or None


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
        self.format = QComboBox()
        self.format.addItem(DETECT, None)
        for reader in readers():
            self.format.addItem(f"{reader.name} — {reader.description}", reader.name)
        self.format.setToolTip(f"{OPTIONS['format'].help} (command line: --format)")
        self.protocol = QComboBox()
        self.protocol.addItem("the dataset's own", None)
        for name in PROTOCOLS:
            self.protocol.addItem(name, name)
        self.protocol.setToolTip("The protocol to score with (command line: --protocol); "
                                 "the dataset's own protocols when not chosen")
        #: The reader options' widgets by ReadOptions field (see :func:`option_field`).
        self.fields = {name: option_field(spec, self)
                       for name, spec in reader_options().items()}
        #: The vector engine's fields (optional): the first descriptor file's queries are
        #: searched there (``irviewer --engine URI --collection NAME``).
        self.engine_fields = {key: QLineEdit() for key in ENGINE_FIELDS}
        for key, edit in self.engine_fields.items():
            edit.setPlaceholderText(ENGINE_PLACEHOLDERS[key])
            edit.setToolTip(f"{OPTIONS[key].help} (command line: {OPTIONS[key].flags[0]})")
        self.message = QLabel("")
        self.message.setStyleSheet(f"color: {palette.ALERT_TEXT}")
        self.message.setWordWrap(True)
        form = QFormLayout()
        form.addRow(FIELD_LABELS["dataset"] + ":", _path_row(self.dataset, file_button,
                                                             folder_button))
        form.addRow(FIELD_LABELS["methods"] + ":", method_row)
        form.addRow(FIELD_LABELS["format"] + ":", self.format)
        form.addRow(FIELD_LABELS["protocol"] + ":", self.protocol)
        for name, spec in reader_options().items():
            widget = self.fields[name]
            if spec.kind in ("file", "folder"):
                assert isinstance(widget, QLineEdit)  # a path is typed (option_field)
                button = QPushButton("Folder…" if spec.kind == "folder" else "File…")
                button.clicked.connect(partial(self._choose, name))
                form.addRow(spec.label + ":", _path_row(widget, button))
            else:
                form.addRow(spec.label + ":", widget)
        lite = QPushButton("File…")
        lite.setToolTip("A Milvus Lite file (.db) holding the gallery's collection")
        lite.clicked.connect(self._choose_engine_file)
        for key, edit in self.engine_fields.items():
            form.addRow(FIELD_LABELS[key] + ":",
                        _path_row(edit, lite) if key == "engine" else edit)
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
        self.format.setCurrentIndex(max(0, self.format.findData(request.format)))
        self.protocol.setCurrentIndex(max(0, self.protocol.findData(request.protocol)))
        for name, spec in reader_options().items():
            set_field(self.fields[name], spec, getattr(request.options, name))
        for key, edit in self.engine_fields.items():
            edit.setText(getattr(request, key) or "")

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
        engine = {key: edit.text().strip() or None for key, edit in self.engine_fields.items()}
        if engine["engine"] and not engine["collection"]:
            self.message.setText("Give the engine's collection that holds the gallery.")
            return None
        if not engine["engine"] and (engine["collection"] or engine["engine_names"]):
            self.message.setText("Give the vector engine (a Milvus Lite file or a server's "
                                 "http://host:19530) for the collection, or clear the "
                                 "collection.")
            return None
        roles = classify_paths(sources)
        options: ReadOptions = replace(
            self._initial.options, gallery_names=None,
            **{name: field_value(self.fields[name], spec)
               for name, spec in reader_options().items()})
        return replace(self._initial, dataset=Path(dataset),
                       descriptors=(*roles.descriptors, *roles.datasets),
                       rankings=roles.rankings, format=self.format.currentData(),
                       options=options, protocol=self.protocol.currentData(),
                       engine=engine["engine"], collection=engine["collection"],
                       engine_names=engine["engine_names"])

    def _accept(self) -> None:
        if self.request() is not None:
            self.accept()

    def _choose_engine_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "A Milvus Lite file",
                                              filter="Milvus Lite (*.db);;All files (*)")
        if path:
            self.engine_fields["engine"].setText(path)

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

    def _choose(self, name: str) -> None:
        """Let the user pick the file or folder of reader option ``name``."""
        spec, edit = reader_options()[name], self.fields[name]
        path = (QFileDialog.getExistingDirectory(self, spec.label) if spec.kind == "folder"
                else QFileDialog.getOpenFileName(self, spec.label)[0])
        if path and isinstance(edit, QLineEdit):
            edit.setText(path)
