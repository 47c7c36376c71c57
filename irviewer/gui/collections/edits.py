"""The curator's own edits in the window: the Collection menu's "Edit this artwork's
details…" (F2: title, artist, year and any other field), "Remove this photo…", "Remove
this artwork…", "These are one artwork…" (two artworks that show one picture put
together: :mod:`irviewer.collection.lookalikes`), and their undo and redo. Each is a
command of :mod:`irviewer.collection.curation` on this menu's own undo stack (the Edit
menu's undo is the label corrections'). After an edit the collection opens again on the
same photo; after a removal or a merge (or its undo) it is indexed again first, as File ▸
Update this collection does.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QKeySequence, QUndoCommand, QUndoStack
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMenu,
    QMessageBox,
    QWidget,
)

from irviewer.collection.curation import (
    NEW_TITLES,
    EditArtwork,
    MergeArtworks,
    RemovePhotos,
    artwork_fields,
    titles_path,
)
from irviewer.collection.lookalikes import ArtworkPair, artwork_pairs, merge_choices
from irviewer.core.errors import InputError
from irviewer.formats.collection import read_record
from irviewer.gui.menus import Menus
from irviewer.opening.opener import Opened
from irviewer.opening.request import OpenRequest

Command = EditArtwork | RemovePhotos | MergeArtworks


class Host(Protocol):
    """What the edits take from the window: the open data and the query shown, its
    messages, and opening a request (the collection again)."""

    @property
    def opened(self) -> Opened | None: ...
    @property
    def current(self) -> int | None: ...
    def show_message(self, message: str) -> None: ...
    def show_error(self, message: str) -> None: ...
    def open_request(self, request: OpenRequest, sync: bool = False) -> None: ...


class Shown(Protocol):
    """What the edits take from the collection actions: the collection shown, the photo
    to show when it opens again, and indexing it again."""

    current: Path | None
    reopen_on: str | None

    def reindex(self, sync: bool = False) -> object: ...


class CurationUndo(QUndoCommand):
    """One curator's edit on the undo stack: run once before it is pushed (the first
    ``redo``, from the push, is skipped), then ``after(command)`` on every redo and undo
    (reopen, or index again); an error is said by ``tell`` and leaves the files as they
    were left."""

    def __init__(self, command: Command, after: Callable[[Command], object],
                 tell: Callable[[str], None]) -> None:
        super().__init__(command.label)
        self.command, self.after, self.tell = command, after, tell
        self._pushed = False

    def redo(self) -> None:
        if not self._pushed:
            self._pushed = True
            return
        self._run(self.command.do)

    def undo(self) -> None:
        self._run(self.command.undo)

    def _run(self, step: Callable[[], None]) -> None:
        try:
            step()
        except (InputError, OSError) as e:
            self.tell(e.for_window() if isinstance(e, InputError) else str(e))
            return
        self.after(self.command)


class ArtworkDialog(QDialog):
    """The fields of one artwork, each in a line to edit, and the titles file they go to."""

    def __init__(self, parent: QWidget, artwork: str, fields: dict[str, str],
                 titles: Path | None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Details of {artwork}")
        self.setMinimumWidth(520)
        form = QFormLayout(self)
        self.edits: dict[str, QLineEdit] = {}
        for name, value in fields.items():
            edit = QLineEdit(value)
            self.edits[name] = edit
            form.addRow(f"{name[:1].upper()}{name[1:]}:", edit)
        where = (f"Saved in the titles file {titles} and in the collection." if titles else
                 f"Saved in a new titles file, {NEW_TITLES} in the collection, and in the "
                 "collection.")
        self.where = QLabel(where + " Collection \u25b8 Undo takes it back.")
        self.where.setWordWrap(True)
        form.addRow(self.where)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def fields(self) -> dict[str, str]:
        """Return the fields as written."""
        return {name: edit.text().strip() for name, edit in self.edits.items()}


class CuratorEdits(QObject):
    """The Collection menu (see the module docstring), in ``parent``'s menu bar through
    ``menus``; ``host`` is the window, ``collections`` the collection actions."""

    def __init__(self, parent: QWidget, host: Host, menus: Menus, collections: Shown) -> None:
        super().__init__(parent)
        self.parent_widget, self.host, self.collections = parent, host, collections
        self.stack = QUndoStack(self)
        #: Answers the "remove?" question (tests replace it).
        self.confirm: Callable[[str], bool] = self._confirm
        #: Picks one of the choices offered (None: cancelled; tests replace it).
        self.choose: Callable[[str, list[str]], str | None] = self._choose
        window = parent
        menu = QMenu("&Collection", window)
        self.edit_action = QAction("&Edit this artwork's details…", window)
        self.edit_action.setShortcut(QKeySequence("F2"))
        self.edit_action.triggered.connect(lambda: self.edit_dialog())
        self.remove_photo_action = QAction("Remove this &photo from the collection…", window)
        self.remove_photo_action.triggered.connect(lambda: self.remove(artwork=False))
        self.remove_artwork_action = QAction("Remove this &artwork from the collection…",
                                             window)
        self.remove_artwork_action.triggered.connect(lambda: self.remove(artwork=True))
        self.merge_action = QAction("These are &one artwork…", window)
        self.merge_action.setToolTip("Two artworks whose photos show one picture: put them "
                                     "together (the photos become views of one artwork)")
        self.merge_action.triggered.connect(lambda: self.merge_dialog())
        undo = self.stack.createUndoAction(window, "&Undo")
        undo.setShortcut(QKeySequence("Ctrl+Alt+Z"))
        redo = self.stack.createRedoAction(window, "&Redo")
        redo.setShortcut(QKeySequence("Ctrl+Alt+Shift+Z"))
        for action in (self.edit_action, self.remove_photo_action,
                       self.remove_artwork_action, self.merge_action):
            menu.addAction(action)
        menu.addSeparator()
        menu.addActions([undo, redo])
        self.menu = menu
        menus.add_menu(menu)
        self.set_enabled(False)

    def set_enabled(self, on: bool) -> None:
        """Offer the edits only while a collection is shown ("These are one artwork…"
        only while it has artworks that show one picture)."""
        for action in (self.edit_action, self.remove_photo_action,
                       self.remove_artwork_action):
            action.setEnabled(on)
        self.merge_action.setEnabled(on and bool(self.lookalikes()))

    def lookalikes(self) -> list[ArtworkPair]:
        """Return the shown collection's artworks that show one picture, in pairs (none
        when no collection is shown or its record cannot be read)."""
        opened, collection = self.host.opened, self.collections.current
        if opened is None or collection is None:
            return []
        try:
            return artwork_pairs(read_record(collection).lookalikes, opened.dataset)
        except InputError:
            return []

    def collection_changed(self) -> None:
        """Another collection (or none) is shown: its edits cannot be undone here."""
        self.stack.clear()

    # -- what is shown -----------------------------------------------------------------
    def shown_photo(self) -> tuple[str, str] | None:
        """Return (the photo's name, its artwork) of the query shown, or None."""
        opened, q = self.host.opened, self.host.current
        if opened is None or q is None or self.collections.current is None:
            return None
        ds = opened.dataset
        name = ds.queries[q].image
        labels = ds.gallery_labels
        if labels is None or name not in ds.gallery:
            return None
        return name, str(labels[ds.gallery.index(name)])

    # -- edits ---------------------------------------------------------------------------
    def edit_dialog(self) -> ArtworkDialog | None:
        """Collection ▸ Edit this artwork's details… (F2) for the artwork shown."""
        shown = self.shown_photo()
        collection = self.collections.current
        if shown is None or collection is None:
            return None
        try:
            fields, titles = artwork_fields(collection, shown[1]), titles_path(collection)
        except InputError as e:
            self.host.show_error(e.for_window())
            return None
        dialog = ArtworkDialog(self.parent_widget, shown[1], fields, titles)
        dialog.accepted.connect(lambda: self.edit(shown[1], dialog.fields()))
        dialog.open()
        return dialog

    def edit(self, artwork: str, fields: dict[str, str]) -> None:
        """Set ``fields`` of ``artwork`` (undoably); the collection opens again on the
        photo shown."""
        collection = self.collections.current
        if collection is None:
            return
        self._push(lambda: EditArtwork(collection, artwork, fields), self._reopen)

    def remove(self, artwork: bool) -> None:
        """Collection ▸ Remove this photo (``artwork`` False) or every photo of its artwork
        from the collection, after asking; the collection is indexed again."""
        shown = self.shown_photo()
        collection = self.collections.current
        if shown is None or collection is None:
            return
        name, label = shown
        try:
            photos = read_record(collection).photos
        except InputError as e:
            self.host.show_error(e.for_window())
            return
        files = tuple(p.file for p in photos if (p.artwork == label if artwork else
                                                  p.name == name))
        opened = self.host.opened
        title = (opened.dataset.titles.get(name) if opened is not None else None) or label
        what = (f"the artwork {title} ({len(files)} photo{'s' * (len(files) != 1)})"
                if artwork else f"the photo {name}")
        if not files or not self.confirm(
                f"Remove {what} from the collection? The photo files move into the hidden "
                "folder .irviewer-removed of the photo folder, never deleted; Collection "
                "\u25b8 Undo brings them back."):
            return
        self._push(lambda: RemovePhotos(collection, files, what),
                   lambda _command: self.collections.reindex())

    def merge_dialog(self) -> None:
        """Collection ▸ These are one artwork…: which pair to put together, and whose title
        stays; then :meth:`merge`."""
        choices = merge_choices(self.lookalikes())
        if not choices:
            self.host.show_message("No two artworks of this collection look like one picture")
            return
        chosen = self.choose("These are one artwork", list(choices))
        if chosen in choices:
            self.merge(*choices[chosen])

    def merge(self, keep: str, join: str) -> None:
        """Make artwork ``join`` a view of artwork ``keep`` (undoably): its photos move into
        ``keep``'s subfolder of the photo folder, and the collection is indexed again."""
        collection, opened = self.collections.current, self.host.opened
        if collection is None or opened is None:
            return
        pair = next((p for p in self.lookalikes() if {p.first, p.second} == {keep, join}),
                    None)
        what = pair.words().rsplit(" (", 1)[0] if pair is not None else f"{keep} and {join}"
        self._push(lambda: MergeArtworks(collection, keep, join, what),
                   lambda _command: self.collections.reindex())

    def _push(self, make: Callable[[], Command], after: Callable[[Command], object]) -> None:
        try:
            command = make()
            command.do()
        except (InputError, OSError) as e:
            self.host.show_error(e.for_window() if isinstance(e, InputError) else str(e))
            return
        self.stack.push(CurationUndo(command, after, self.host.show_error))
        self.host.show_message(f"Done: {command.label} — Collection \u25b8 Undo takes it "
                                 "back")
        after(command)

    def _reopen(self, _command: Command) -> None:
        """Open the collection again, on the photo shown (its new details show)."""
        shown = self.shown_photo()
        collection = self.collections.current
        if collection is None:
            return
        self.collections.reopen_on = shown[0] if shown else None
        self.host.open_request(OpenRequest(collection))

    def _choose(self, title: str, choices: list[str]) -> str | None:
        choice, ok = QInputDialog.getItem(self.parent_widget, title,
                                          "Put together (Collection \u25b8 Undo takes it "
                                          "back):", choices, 0, False)
        return choice if ok else None

    def _confirm(self, question: str) -> bool:
        answer = QMessageBox.question(self.parent_widget, "Remove from the collection", question)
        return answer == QMessageBox.StandardButton.Yes
