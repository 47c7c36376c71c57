"""A curator's own collection in the window: File ▸ New collection from a folder… (the photo
folder, an optional titles file, where to write it; a progress bar with the time left and
Cancel; then the collection opens), File ▸ Add photos to this collection… and File ▸ Update
this collection (the photo folder indexed again: only new or changed photos are described).

Indexing runs off the GUI thread (:class:`~irviewer.gui.workers.Indexer` around
:func:`irviewer.opening.indexing.iter_index`); a cancelled run writes nothing.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from irviewer.core.errors import InputError
from irviewer.formats.collection import NAME as COLLECTION
from irviewer.formats.collection import photos_base, read_record
from irviewer.formats.photo_folder import photo_suffixes
from irviewer.gui.workers import Indexer
from irviewer.opening.request import OpenRequest
from irviewer.view.progress import progress_words

if TYPE_CHECKING:
    from irviewer.opening.indexing import Indexed, IndexRequest

# The indexer (the extractors, the photo pool) is imported when a collection is made or
# updated, not with the window.


def index_request(photos: Path, out: Path, titles: Path | None = None,
                  mode: str | None = None) -> IndexRequest:
    """Return the request to index ``photos`` into ``out`` (``mode``: how photos are
    described in parallel; None for the indexer's default, worker processes)."""
    from irviewer.opening.indexing import IndexRequest

    return IndexRequest(photos, out, titles, **({"mode": mode} if mode else {}))

#: Lines of skipped photos and notes the indexing dialog shows without scrolling.
SHOWN_LINES = 16

#: The choice of "Add photos" that makes each photo an artwork of its own.
NEW_ARTWORKS = "New artworks (one per photo)"


def default_collection_folder(photos: Path) -> Path:
    """Return where a collection of ``photos`` goes unless the curator says otherwise: a
    folder beside the photo folder, named after it ("paintings collection")."""
    photos = Path(photos)
    return photos.parent / f"{photos.name} collection"


class PathField(QWidget):
    """A line edit with a Browse… button that asks for a folder or a file."""

    def __init__(self, ask) -> None:  # type: ignore[no-untyped-def]
        super().__init__()
        self.edit = QLineEdit()
        browse = QPushButton("Browse…")
        browse.clicked.connect(lambda: self._browse(ask))
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.edit, 1)
        layout.addWidget(browse)

    def _browse(self, ask) -> None:  # type: ignore[no-untyped-def]
        chosen = ask()
        if chosen:
            self.edit.setText(chosen)

    def path(self) -> Path | None:
        """Return the path written, or None when the field is empty."""
        text = self.edit.text().strip()
        return Path(text).expanduser() if text else None


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
        self.photos.edit.textChanged.connect(self._suggest_out)
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
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(hint)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addWidget(self.skipped)
        layout.addWidget(self.buttons)
        self.result_: Indexed | None = None
        self._started = 0.0
        self._stage = ""
        self._connections = [indexer.progress.connect(self._on_progress),
                             indexer.done.connect(self._on_done),
                             indexer.failed.connect(self._on_failed)]
        self.finished.connect(self._disconnect)
        if request is not None:
            self.photos.edit.setText(str(request.photos))
            self.titles.edit.setText(str(request.titles) if request.titles else "")
            self.out.edit.setText(str(request.out))
            self.start_button.setText("Update and open")

    def _disconnect(self) -> None:
        for signal, connection in zip((self.indexer.progress, self.indexer.done,
                                       self.indexer.failed), self._connections, strict=True):
            signal.disconnect(connection)
        self._connections = []

    def _suggest_out(self, text: str) -> None:
        if text.strip() and not self.out.edit.isModified():
            self.out.edit.setText(str(default_collection_folder(Path(text.strip()))))

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
        self.result_ = None
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
        self.result_ = indexed
        self.progress.setVisible(False)
        self.start_button.setEnabled(True)
        self.indexed.emit(indexed)
        record = indexed.record
        lines = [*(s.reason for s in record.skipped), *indexed.lines]
        self.status.setText(indexed.summary())
        if lines:
            self.skipped.setPlainText("\n".join(lines))
            self._fit_lines(len(lines))
            self.skipped.setVisible(True)
            self.start_button.setVisible(False)
            self.cancel_button.setText("Close")
        else:
            self.accept()

    def _fit_lines(self, n: int) -> None:
        """Make the box of skipped photos and notes tall enough for its ``n`` lines (at most
        :data:`SHOWN_LINES`; more scroll), and the dialog tall enough for the box."""
        spacing = self.skipped.fontMetrics().lineSpacing()
        margins = 2 * (self.skipped.frameWidth() + round(self.skipped.document().documentMargin()))
        self.skipped.setMinimumHeight(min(n, SHOWN_LINES) * spacing + margins + 4)
        self.adjustSize()

    def _on_failed(self, message: str) -> None:
        self.progress.setVisible(False)
        self.start_button.setEnabled(True)
        self.status.setText(f"<span style='color:#B00020'>{message}</span>")


class Collections(QObject):
    """The window's collection actions (File menu); ``mode`` is how photos are described
    (worker processes; tests set :data:`~irviewer.opening.describing.SERIAL`). ``window`` is
    the main window: its menus, opening controller, messages and what it shows."""

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.window = window
        #: How photos are described (None: the indexer's default, worker processes).
        self.mode: str | None = None
        self.indexer = Indexer(self)
        self.dialog: CollectionDialog | None = None
        self.new_action = QAction("&New collection from a folder…", window)
        self.new_action.setShortcut(QKeySequence("Ctrl+Shift+N"))
        self.new_action.triggered.connect(lambda: self.new_collection())
        self.add_action = QAction("Add p&hotos to this collection…", window)
        self.add_action.triggered.connect(lambda: self.add_photos_dialog())
        self.update_action = QAction("&Update this collection", window)
        self.update_action.triggered.connect(lambda: self.update_collection())
        for action in (self.new_action, self.add_action, self.update_action):
            window.menus.add_file_action(action, with_opening=True)
        self.set_collection(None)
        window.opening.opened.connect(lambda opened: self.set_collection(
            opened.dataset.path if opened.dataset.format == COLLECTION else None))

    def set_collection(self, path: Path | None) -> None:
        """Remember the collection shown (None: the window shows another dataset)."""
        self.current = path
        for action in (self.add_action, self.update_action):
            action.setEnabled(path is not None)

    def new_collection(self, photos: Path | None = None, out: Path | None = None,
                       titles: Path | None = None) -> CollectionDialog:
        """File ▸ New collection from a folder…: show the dialog (filled in with what is
        given); the collection opens when it is indexed."""
        dialog = self._dialog(None)
        for field, value in ((dialog.photos, photos), (dialog.out, out),
                             (dialog.titles, titles)):
            if value is not None:
                field.edit.setText(str(value))
        dialog.open()
        return dialog

    def update_collection(self) -> CollectionDialog | None:
        """File ▸ Update this collection: index its photo folder again (only new or
        changed photos are described) and reopen it."""
        request = self._update_request()
        if request is None:
            return None
        dialog = self._dialog(request)
        dialog.open()
        return dialog

    def add_photos_dialog(self) -> None:
        """File ▸ Add photos to this collection…: ask for photos and which artwork they
        show (new artworks, or views of one), then :meth:`add_photos`."""
        if self.current is None:
            return
        patterns = " ".join(f"*{s}" for s in sorted(photo_suffixes()))
        files, _ = QFileDialog.getOpenFileNames(self.window, "Photos to add", "",
                                                f"Photos ({patterns})")
        if not files:
            return
        labels = self.window.opened.dataset.gallery_labels if self.window.opened else None
        artworks = sorted({str(x) for x in labels.tolist()}) if labels is not None else []
        choice, ok = QInputDialog.getItem(self.window, "Add photos",
                                          "The photos show:", [NEW_ARTWORKS, *artworks], 0,
                                          False)
        if ok:
            self.add_photos([Path(f) for f in files],
                            None if choice == NEW_ARTWORKS else choice)

    def add_photos(self, files: list[Path], artwork: str | None = None,
                   sync: bool = False) -> CollectionDialog | None:
        """Copy ``files`` into the collection's photo folder (each a new artwork, or, with
        ``artwork``, into that artwork's subfolder as views of it), then update the
        collection. A file whose name is taken there is not copied (the window says so)."""
        request = self._update_request()
        if request is None:
            return None
        target = Path(request.photos) / artwork if artwork else Path(request.photos)
        target.mkdir(parents=True, exist_ok=True)
        taken = []
        for f in files:
            if (target / f.name).exists():
                taken.append(f.name)
            else:
                shutil.copy2(f, target / f.name)
        if taken:
            self.window.show_message(f"Not added, a photo of that name is already there: "
                                     f"{', '.join(taken)}")
        dialog = self._dialog(request)
        dialog.open()
        dialog.start(sync=sync)
        return dialog

    def _update_request(self) -> IndexRequest | None:
        """Return the request that indexes the shown collection again; None (and the
        sentence shown) when its record or photo folder cannot be found."""
        if self.current is None:
            return None
        try:
            record = read_record(self.current)
            base, _ = photos_base(self.current, record)
        except InputError as e:
            self.window.show_error(e.for_window())
            return None
        return index_request(base, self.current, mode=self.mode)

    def _dialog(self, request: IndexRequest | None) -> CollectionDialog:
        """Return a new dialog (the previous one, if any, closed and let go)."""
        if self.dialog is not None:
            self.dialog.close()
            self.dialog.deleteLater()
        dialog = CollectionDialog(self.window, self.indexer, self.mode, request)
        dialog.indexed.connect(self._open)
        self.dialog = dialog
        return dialog

    def _open(self, indexed: Indexed) -> None:
        self.window.show_message(indexed.summary())
        self.window.open_request(OpenRequest(indexed.collection))
