"""A curator's own collection in the window: File ▸ New collection from a folder… (the photo
folder, an optional titles file, where to write it; a progress bar with the time left and
Cancel; then the collection opens), File ▸ Add photos to this collection… and File ▸ Update
this collection (the photo folder indexed again: only new or changed photos are described).

Indexing runs off the GUI thread (:class:`~irviewer.gui.workers.Indexer` around
:func:`irviewer.collection.indexing.iter_index`); a cancelled run writes nothing.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QInputDialog, QWidget

from irviewer.collection.curation import titles_path
from irviewer.collection.lookalikes import lookalike_warning
from irviewer.core.dataset import Dataset
from irviewer.core.errors import InputError
from irviewer.formats.collection import NAME as COLLECTION
from irviewer.formats.collection import photos_base, read_record
from irviewer.formats.photo_folder import photo_suffixes
from irviewer.gui.collections import edits
from irviewer.gui.collections.dialog import CollectionDialog, index_request
from irviewer.gui.collections.edits import CuratorEdits
from irviewer.gui.menus import Menus
from irviewer.gui.workers import Indexer
from irviewer.opening.opener import Opened
from irviewer.opening.request import OpenRequest
from irviewer.view.presentation import instance_titles

if TYPE_CHECKING:
    from irviewer.collection.indexing import Indexed, IndexRequest


class Host(edits.Host, Protocol):
    """What the collection actions take from the window: what the edits take (the open
    data and the query shown, its messages, opening a request), showing a query again,
    and a warning box that does not block."""

    def select_query(self, name: str) -> None: ...
    def show_query(self, q: int) -> None: ...
    def tell(self, message: str) -> None: ...


def artwork_choices(dataset: Dataset) -> dict[str, str]:
    """Return what "Add photos" offers as the artwork the photos show: its title (with the
    id after it where two artworks share a title, or the id alone when it has none) ->
    the artwork id, in title order."""
    titles = instance_titles(dataset)
    shown = list(titles.values())
    out = {}
    for label, title in titles.items():
        words = title if title == label or shown.count(title) == 1 else f"{title} ({label})"
        out[words] = label
    return dict(sorted(out.items(), key=lambda item: item[0].lower()))


#: The choice of "Add photos" that makes each photo an artwork of its own.
NEW_ARTWORKS = "New artworks (one per photo)"


class Collections(QObject):
    """The window's collection actions (File menu); ``mode`` is how photos are described
    (worker processes; tests set :data:`~irviewer.collection.describing.SERIAL`). The window
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
        self.current: Path | None = None
        #: The collection and lookalike pairs the window last warned about.
        self._told: tuple[Path | None, tuple[tuple[str, str], ...]] = (None, ())
        #: The photo to show again when the collection next opens (after an edit).
        self.reopen_on: str | None = None
        self.edits = CuratorEdits(parent, host, menus, self)
        self.set_collection(None)

    def data_opened(self, opened: Opened) -> None:
        """Data was opened: the collection actions act on it when it is a collection, and
        artworks of it that show one picture are said in a box (once, until they change)."""
        self.set_collection(opened.dataset.path if opened.dataset.format == COLLECTION
                            else None)
        pairs = self.edits.lookalikes()
        said = (self.current, tuple((p.first, p.second) for p in pairs))
        warning = lookalike_warning(pairs)
        if warning is not None and said != self._told:
            self.host.tell(warning)
        self._told = said

    def set_collection(self, path: Path | None) -> None:
        """Remember the collection shown (None: the window shows another dataset); the
        curator's edits of another collection can no longer be undone."""
        if path != self.current:
            self.edits.collection_changed()
        self.current = path
        for action in (self.add_action, self.update_action):
            action.setEnabled(path is not None)
        self.edits.set_enabled(path is not None)
        if path is not None and self.reopen_on is not None:
            name, self.reopen_on = self.reopen_on, None
            QTimer.singleShot(0, lambda: self._show_again(name))

    def _show_again(self, name: str) -> None:
        opened = self.host.opened
        if opened is None:
            return
        try:
            q = opened.dataset.query_by_name(name)
        except InputError:  # gone (removed): the first photo is shown
            return
        self.host.select_query(name)
        self.host.show_query(q)  # painted again even when it stayed selected

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
        choices = artwork_choices(opened.dataset) if opened is not None else {}
        choice, ok = QInputDialog.getItem(self.parent_widget, "Add photos",
                                          "The photos show:", [NEW_ARTWORKS, *choices], 0,
                                          False)
        if ok:
            self.add_photos([Path(f) for f in files],
                            None if choice == NEW_ARTWORKS else choices[choice])

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
        return self._start(request, sync)

    def reindex(self, sync: bool = False) -> CollectionDialog | None:
        """Index the shown collection again now (after photos were removed or put back),
        with the dialog's progress; it opens again when done."""
        request = self._update_request()
        return None if request is None else self._start(request, sync)

    def _start(self, request: IndexRequest, sync: bool) -> CollectionDialog:
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
            titles = titles_path(self.current)
        except InputError as e:
            self.host.show_error(e.for_window())
            return None
        return index_request(base, self.current,
                             titles if titles is not None and titles.is_file() else None,
                             self.mode)

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
