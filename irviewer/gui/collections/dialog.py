"""The dialog that indexes a photo folder into a collection: the photo folder, an optional
titles file, where to write it, a progress bar with the time left and Cancel (indexing in
the collection actions' :class:`~irviewer.gui.workers.Indexer`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from irviewer.core.errors import window_text
from irviewer.gui.workers import Indexer
from irviewer.view import palette
from irviewer.view.progress import progress_words

if TYPE_CHECKING:
    from irviewer.collection.indexing import Indexed, IndexRequest

# The indexer (the extractors, the photo pool) is imported when a collection is made or
# updated, not with the window.


def index_request(photos: Path, out: Path, titles: Path | None = None,
                  mode: str | None = None) -> IndexRequest:
    """Return the request to index ``photos`` into ``out`` (``mode``: how photos are
    described in parallel; None for the indexer's default, worker processes)."""
    from irviewer.collection.indexing import IndexRequest

    request = IndexRequest(photos, out, titles)
    return replace(request, mode=mode) if mode else request

#: Lines of skipped photos and notes the indexing dialog shows without scrolling.
SHOWN_LINES = 16


def default_collection_folder(photos: Path) -> Path:
    """Return where a collection of ``photos`` goes unless the curator says otherwise: a
    folder beside the photo folder, named after it ("paintings collection")."""
    photos = Path(photos)
    return photos.parent / f"{photos.name} collection"


class PathField(QWidget):
    """A line edit with a Browse… button that asks for a folder or a file; ``edited(text)``
    when its text changes."""

    edited = Signal(str)

    def __init__(self, ask: Callable[[], str]) -> None:
        super().__init__()
        self.edit = QLineEdit()
        self.edit.textChanged.connect(self.edited)
        browse = QPushButton("Browse…")
        browse.clicked.connect(lambda: self._browse(ask))
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.edit, 1)
        layout.addWidget(browse)

    def _browse(self, ask: Callable[[], str]) -> None:
        chosen = ask()
        if chosen:
            self.edit.setText(chosen)

    def path(self) -> Path | None:
        """Return the path written, or None when the field is empty."""
        text = self.edit.text().strip()
        return Path(text).expanduser() if text else None

    def set_path(self, path: Path | str | None) -> None:
        """Show ``path`` (None: empty)."""
        self.edit.setText("" if path is None else str(path))

    def typed(self) -> bool:
        """Return whether the user typed in the field (not only :meth:`set_path`)."""
        return self.edit.isModified()


class CollectionDialog(QDialog):
    """Indexing a photo folder, with progress and Cancel. For a new collection the curator
    fills in the folders; for an update they are given. ``indexed(Indexed)`` when it is
    done; the dialog then closes, unless photos were skipped, which it lists first."""

    indexed = Signal(object)

    def __init__(self, parent: QWidget, indexer: Indexer, mode: str | None = None,
                 request: IndexRequest | None = None) -> None:
        super().__init__(parent)
        self.indexer, self.mode = indexer, mode
        self.setWindowTitle("Update the collection" if request else
                            "New collection from a folder")
        self.setMinimumWidth(620)
        self.photos = PathField(lambda: QFileDialog.getExistingDirectory(
            self, "The folder of photos (one per artwork, or one subfolder per artwork)"))
        self.titles = PathField(lambda: QFileDialog.getOpenFileName(
            self, "Titles (CSV: artwork id, title, artist, year, ...)", "",
            "CSV files (*.csv);;All files (*)")[0])
        self.out = PathField(lambda: QFileDialog.getExistingDirectory(
            self, "Where to write the collection"))
        self.titles.edit.setPlaceholderText("none: each artwork is shown by its id")
        self.photos.edited.connect(self._suggest_out)
        form = QFormLayout()
        form.addRow("Photos:", self.photos)
        form.addRow("Titles (optional):", self.titles)
        form.addRow("Collection:", self.out)
        hint = QLabel("One photo per artwork (its file name is the artwork's id), or one "
                      "subfolder per artwork (its photos are views of it). The photos are "
                      "referenced, not copied. Titles: a CSV whose first column is the "
                      "artwork id, then title, artist, year, room, …")
        hint.setWordWrap(True)
        self.progress = QProgressBar()
        self.progress.setVisible(False)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.skipped = QPlainTextEdit()
        self.skipped.setReadOnly(True)
        self.skipped.setVisible(False)
        self.buttons = QDialogButtonBox()
        self.start_button = self.buttons.addButton(
            "Index and open", QDialogButtonBox.ButtonRole.AcceptRole)
        self.cancel_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.start_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)
        self._layout = layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(hint)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addWidget(self.skipped)
        layout.addWidget(self.buttons)
        self._started = 0.0
        self._stage = ""
        self._connections = [indexer.progress.connect(self._on_progress),
                             indexer.done.connect(self._on_done),
                             indexer.failed.connect(self._on_failed)]
        self.finished.connect(self._disconnect)
        if request is not None:
            self.fill(request.photos, request.out, request.titles)
            self.start_button.setText("Update and open")

    def _disconnect(self) -> None:
        if not self._connections:  # finished twice (closed after it was accepted)
            return
        for signal, connection in zip((self.indexer.progress, self.indexer.done,
                                       self.indexer.failed), self._connections, strict=True):
            signal.disconnect(connection)
        self._connections = []

    def fill(self, photos: Path | None, out: Path | None, titles: Path | None) -> None:
        """Show these paths in their fields (None: a field keeps what it shows)."""
        for field, value in ((self.photos, photos), (self.out, out), (self.titles, titles)):
            if value is not None:
                field.set_path(value)

    def _suggest_out(self, text: str) -> None:
        if text.strip() and not self.out.typed():
            self.out.set_path(default_collection_folder(Path(text.strip())))

    def request(self) -> IndexRequest | None:
        """Return what the fields ask for; None (and the reason shown) when a folder is
        missing."""
        photos, out = self.photos.path(), self.out.path()
        if photos is None or out is None:
            self.status.setText("Choose the folder of photos and where to write the "
                                "collection.")
            return None
        return index_request(photos, out, self.titles.path(), self.mode)

    def start(self, sync: bool = False) -> None:
        """Start indexing what the fields name (``sync`` for tests)."""
        request = self.request()
        if request is None:
            return
        self.start_button.setEnabled(False)
        self.skipped.setVisible(False)
        self.progress.setVisible(True)
        self.progress.setRange(0, 0)
        self.status.setText("Listing the photos…")
        self._started, self._stage = time.perf_counter(), ""
        self.indexer.index(request, sync=sync)

    def cancel(self) -> None:
        """Cancel: stop indexing (nothing is written) or close the dialog."""
        if self.indexer.running:
            self.indexer.cancel()
            self.progress.setVisible(False)
            self.start_button.setEnabled(True)
            self.status.setText("Cancelled: nothing was written, the collection is as it "
                                "was.")
        else:
            self.reject()

    def _on_progress(self, stage: str, done: int, total: int) -> None:
        if stage != self._stage:
            self._stage, self._started = stage, time.perf_counter()
        if total:
            self.progress.setRange(0, total)
            self.progress.setValue(done)
        else:
            self.progress.setRange(0, 0)
        words = progress_words(stage, done, total, time.perf_counter() - self._started)
        self.status.setText(words[:1].upper() + words[1:])

    def _on_done(self, indexed: Indexed) -> None:
        self.progress.setVisible(False)
        self.start_button.setEnabled(True)
        self.indexed.emit(indexed)
        record = indexed.record
        lines = [*(s.reason for s in record.skipped), *map(window_text, indexed.lines)]
        self.status.setText(indexed.summary())
        if lines:
            self.skipped.setPlainText("\n".join(lines))
            self.skipped.setVisible(True)
            self._fit_lines()
            self.start_button.setVisible(False)
            self.cancel_button.setText("Close")
        else:
            self.accept()

    def _fit_lines(self) -> None:
        """Make the box of skipped photos and notes as tall as its lines wrapped at its
        width (at most :data:`SHOWN_LINES` rows; more scroll), and the dialog tall enough
        for the box."""
        box = self.skipped
        spacing = box.fontMetrics().lineSpacing()
        margins = 2 * (box.frameWidth() + round(box.document().documentMargin()))
        for _ in range(2):  # the dialog's new size may wrap the lines anew
            self._layout.activate()  # the box's width as laid out now
            shape, block, rows = box.document().documentLayout(), box.document().begin(), 0
            while block.isValid():
                shape.blockBoundingRect(block)  # lays the block out at the box's width
                rows += max(1, block.layout().lineCount())
                block = block.next()
            box.setFixedHeight(min(rows, SHOWN_LINES) * spacing + margins + 4)
            self.adjustSize()

    def _on_failed(self, message: str) -> None:
        self.progress.setVisible(False)
        self.start_button.setEnabled(True)
        self.status.setText(f"<span style='color:{palette.ALERT_TEXT}'>{message}</span>")
