"""A curator's own collection in the window: File ▸ New collection from a folder… (the photo
folder, an optional titles file, where to write it; a progress bar with the time left and
Cancel; then the collection opens), File ▸ Add photos to this collection… and File ▸ Update
this collection (the photo folder indexed again: only new or changed photos are described).

Indexing runs off the GUI thread (:class:`~irviewer.gui.workers.Indexer` around
:func:`irviewer.opening.indexing.iter_index`); a cancelled run writes nothing.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QInputDialog, QWidget

from irviewer.core.errors import InputError
from irviewer.formats.collection import NAME as COLLECTION
from irviewer.formats.collection import photos_base, read_record
from irviewer.formats.photo_folder import photo_suffixes
from irviewer.gui.collections.dialog import CollectionDialog, index_request
from irviewer.gui.menus import Menus
from irviewer.gui.workers import Indexer
from irviewer.opening.opener import Opened
from irviewer.opening.request import OpenRequest

if TYPE_CHECKING:
    from irviewer.opening.indexing import Indexed, IndexRequest


class Host(Protocol):
    """What the collection actions take from the window: the open data, its messages, and
    opening a request (the collection made)."""

    @property
    def opened(self) -> Opened | None: ...
    def show_message(self, message: str) -> None: ...
    def show_error(self, message: str) -> None: ...
    def open_request(self, request: OpenRequest, sync: bool = False) -> None: ...


#: The choice of "Add photos" that makes each photo an artwork of its own.
NEW_ARTWORKS = "New artworks (one per photo)"


class Collections(QObject):
    """The window's collection actions (File menu); ``mode`` is how photos are described
    (worker processes; tests set :data:`~irviewer.opening.describing.SERIAL`). The window
    calls :meth:`data_opened` when data opens (the actions follow whether it is a
    collection)."""

    def __init__(self, parent: QWidget, host: Host, menus: Menus) -> None:
        super().__init__(parent)
        self.parent_widget, self.host = parent, host
        #: How photos are described (None: the indexer's default, worker processes).
        self.mode: str | None = None
        self.indexer = Indexer(self)
        self.dialog: CollectionDialog | None = None
        self.new_action = QAction("&New collection from a folder…", parent)
        self.new_action.setShortcut(QKeySequence("Ctrl+Shift+N"))
        self.new_action.triggered.connect(lambda: self.new_collection())
        self.add_action = QAction("Add p&hotos to this collection…", parent)
        self.add_action.triggered.connect(lambda: self.add_photos_dialog())
        self.update_action = QAction("&Update this collection", parent)
        self.update_action.triggered.connect(lambda: self.update_collection())
        for action in (self.new_action, self.add_action, self.update_action):
            menus.add_file_action(action, with_opening=True)
        self.set_collection(None)

    def data_opened(self, opened: Opened) -> None:
        """Data was opened: the collection actions act on it when it is a collection."""
        self.set_collection(opened.dataset.path if opened.dataset.format == COLLECTION
                            else None)

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
        dialog.fill(photos, out, titles)
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
        files, _ = QFileDialog.getOpenFileNames(self.parent_widget, "Photos to add", "",
                                                f"Photos ({patterns})")
        if not files:
            return
        opened = self.host.opened
        labels = opened.dataset.gallery_labels if opened is not None else None
        artworks = sorted({str(x) for x in labels.tolist()}) if labels is not None else []
        choice, ok = QInputDialog.getItem(self.parent_widget, "Add photos",
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
            self.host.show_message(f"Not added, a photo of that name is already there: "
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
            self.host.show_error(e.for_window())
            return None
        return index_request(base, self.current, mode=self.mode)

    def _dialog(self, request: IndexRequest | None) -> CollectionDialog:
        """Return a new dialog (the previous one, if any, closed and let go)."""
        if self.dialog is not None:
            self.dialog.close()
            self.dialog.deleteLater()
        dialog = CollectionDialog(self.parent_widget, self.indexer, self.mode, request)
        dialog.indexed.connect(self._open)
        self.dialog = dialog
        return dialog

    def _open(self, indexed: Indexed) -> None:
        self.host.show_message(indexed.summary())
        self.host.open_request(OpenRequest(indexed.collection))
