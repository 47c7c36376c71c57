"""The corrections file as the window keeps it: saving without ever blocking, what other
writers saved taken in, and nothing lost when the file cannot be written for a while.

:class:`Sidecar` holds the file in use, what this window last read from it (the base of the
three-way merge, :mod:`irviewer.formats.corrections_merge`) and whether every correction is
in it. A save takes the file's lock without waiting (:class:`~irviewer.formats.file_lock.
LockHeldError` when another writer holds it): the window never freezes. A correction that
could not be saved is *unsaved*: the panel and the title say so with the reason, the window's
autosave keeps it (:mod:`irviewer.formats.unsaved_corrections`), and the save is tried again
every :data:`RETRY_MS` ms until it goes through. Every :data:`WATCH_MS` ms the file is looked
at for what other writers saved; a file that could not be read is looked at too, and read
again (by the controller) as soon as it changes.
"""

from __future__ import annotations

import socket
import uuid
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from irviewer.core.corrections import Correction
from irviewer.core.errors import InputError, counted
from irviewer.formats import unsaved_corrections as autosave
from irviewer.formats.corrections_merge import Merged, merge, read_disk, save_merged
from irviewer.formats.file_lock import LockHeldError
from irviewer.view.corrections_saving import Saving

#: How often the window looks for corrections other writers saved to its file (ms).
WATCH_MS = 2000
#: How often a save that could not go through is tried again (ms).
RETRY_MS = 500

Rows = tuple[Correction, ...]


def new_window_id() -> str:
    """Return a short id for a window, written in each of its corrections (``3f2a9c``)."""
    return uuid.uuid4().hex[:6]


class Sidecar(QObject):
    """The corrections file of one window (see the module's docstring).

    ``ours()`` returns the rows the window holds (its log's, as they would be saved);
    ``take(merged, disk)`` applies to the window what a merge brought in (other writers'
    corrections) and ``reload()`` reads a refused file again. Signals: ``changed()`` when
    what :meth:`saving` says changes, ``message(text)`` for the status line,
    ``error(sentence)`` for a failure the user must see (once per failure, not per retry).
    """

    changed = Signal()
    message = Signal(str)
    error = Signal(str)

    def __init__(self, parent: QObject, ours: Callable[[], Rows],
                 take: Callable[[Merged], None], reload: Callable[[], None]) -> None:
        super().__init__(parent)
        self.ours, self.take, self.reload = ours, take, reload
        self.window = new_window_id()
        autosave.hold(self.window)
        self.machine = socket.gethostname()
        self.path: Path | None = None
        self.where = ""  # why the file is in the user's data folder ("": beside the dataset)
        self.base: Rows = ()
        self.refused = ""  # the sentence of a file that could not be read
        self.unsaved = 0
        self.why = ""  # the reason of the last failed save
        self._told = ""  # the failure last shown in a dialog (a retry does not show it again)
        self._seen: tuple[float, int] | None = None  # the file's (mtime, size) when read
        self.retry = QTimer(self)
        self.retry.setInterval(RETRY_MS)
        self.retry.timeout.connect(self.save)
        self.watch = QTimer(self)
        self.watch.setInterval(WATCH_MS)
        self.watch.timeout.connect(self.look)
        self.watch.start()

    # -- which file ----------------------------------------------------------------------
    def use(self, path: Path | None, base_from: Path | None = None, where: str = "") -> None:
        """Keep the corrections in ``path`` from now on; the base is what ``base_from``
        holds (None: nothing yet). Clears a refusal and any unsaved state (the caller saves
        what is to be saved)."""
        self.path, self.where, self.refused = path, where, ""
        self._read_base(base_from)
        self._saved_state()

    def refuse(self, path: Path, sentence: str) -> None:
        """``path`` (the file this dataset's corrections are in) could not be read: keep it
        in use, make no correction until it can be read (:meth:`look` watches it)."""
        self.path, self.refused, self.base = path, sentence, ()
        self._seen = self.stamp()
        self._saved_state()

    def _saved_state(self) -> None:
        self.unsaved, self.why, self._told = 0, "", ""
        self.retry.stop()
        autosave.clear_unsaved(self.window)
        self.changed.emit()

    def saving(self) -> Saving:
        """Return where the corrections go and how far they got, for the panel."""
        return Saving(self.path, self.path is not None and self.path.is_file(), self.unsaved,
                      self.why, self.refused, self.where)

    # -- saving --------------------------------------------------------------------------
    def save(self) -> bool:
        """Merge the window's rows into the file under its lock, without waiting for
        another writer; return True when the file holds them. Otherwise they are unsaved:
        kept in the autosave, said, and tried again every :data:`RETRY_MS` ms."""
        if self.path is None or self.refused:
            return False
        ours = self.ours()
        try:
            merged = save_merged(self.path, self.base, ours, wait=0, window=self.window)
        except LockHeldError as e:
            self._not_saved(ours, f"{self.path.name} is being written by {e.holder}", False)
            return False
        except InputError as e:  # the file on disk broke, or the folder cannot be written
            self._not_saved(ours, str(e), True)
            return False
        except OSError as e:
            self._not_saved(ours, f"{self.path} cannot be written ({e.strerror})", True)
            return False
        had = self.unsaved
        self.base, self._seen = merged.rows, self.stamp()
        self._saved_state()
        if had:
            self.message.emit(f"Saved: the {'correction' if had == 1 else f'{had} corrections'} "
                              f"waiting {'is' if had == 1 else 'are'} now in {self.path}")
        self.take(merged)
        return True

    def _not_saved(self, ours: Rows, why: str, tell: bool) -> None:
        """The save failed for ``why``: keep ``ours`` in the autosave and try again."""
        assert self.path is not None
        self.unsaved = autosave.pending(self.base, ours)
        if not self.unsaved:  # nothing of this window's is missing from the file
            self._saved_state()
            return
        first = not self.why
        self.why = why
        try:
            autosave.write_unsaved(self.window, self.path, self.base, ours)
        except (OSError, InputError) as e:
            self.why = f"{why}; the autosave could not be written either ({e})"
        if not self.retry.isActive():
            self.retry.start()
        if tell and why != self._told:
            self._told = why
            self.error.emit(f"The corrections could not be saved: {why}. They are kept in "
                            "the window and its autosave, and saved as soon as the file can "
                            "be written.")
        elif first:
            self.message.emit(f"Not saved yet: {why}; saved as soon as it is free")
        self.changed.emit()

    def discard_unsaved(self) -> None:
        """The user chose to lose the unsaved corrections (closing): drop the autosave."""
        self._saved_state()

    def leave_unsaved(self) -> str:
        """The window moves on to another file with corrections it could not save: try once
        more, else leave them in an autosave of their own, saved by the next window that
        opens this file. Return the sentence saying so ("" when all was saved)."""
        if not self.unsaved or self.save():
            return ""
        count, path = self.unsaved, self.path
        autosave.detach(self.window)
        self._saved_state()
        return (f"{counted(count, 'correction')} not saved to {path} "
                f"({'is' if count == 1 else 'are'} kept in irviewer's autosave and saved "
                "the next time that file is opened")
    # -- other writers -------------------------------------------------------------------
    def look(self) -> None:
        """Take in what other writers saved since the window last read the file (the watch
        timer); a refused file that changed is read again."""
        if self.path is None or self.stamp() == self._seen:
            return
        if self.refused:
            self._seen = self.stamp()
            self.reload()
            return
        if self.unsaved:
            return  # the next retry merges and takes in
        try:
            disk = read_disk(self.path)
        except InputError:
            return  # being replaced this instant, or broken: the next save says so
        base = self.base
        self.base, self._seen = disk, self.stamp()
        self.take(merge(base, self.ours(), disk))

    def recover_orphans(self) -> None:
        """Save the corrections that windows now gone (or gone on to other data) left
        unsaved in their autosaves for this file, each merged with the file as it is, take
        them in, and say so."""
        if self.path is None or self.refused:
            return
        said = []
        for orphan in autosave.orphaned(self.path):
            try:
                save_merged(self.path, orphan.base, orphan.ours, wait=0, window=orphan.window)
            except InputError:
                continue  # the lock is held, or the file broke: the next opening tries again
            with suppress(OSError):
                orphan.source.unlink()
            if orphan.count():
                said.append(f"{counted(orphan.count(), 'correction')} that window "
                            f"{orphan.window.split('-')[0]} could not save "
                            f"{'was' if orphan.count() == 1 else 'were'} recovered from "
                            f"irviewer's autosave and saved to {self.path.name}")
        self.look()
        if said:
            self.message.emit("; ".join(said))

    def _read_base(self, path: Path | None) -> None:
        """Take what the file at ``path`` holds as the base (None: nothing)."""
        try:
            self.base = read_disk(path) if path is not None else ()
        except InputError:
            self.base = ()
        self._seen = self.stamp()

    def stamp(self) -> tuple[float, int] | None:
        """Return the corrections file's (mtime, size) (None: no file)."""
        try:
            st = self.path.stat() if self.path is not None else None
        except OSError:
            return None
        return None if st is None else (st.st_mtime, st.st_size)

    def stop(self) -> None:
        """Stop watching and retrying (closing the window); an autosave left is an orphan
        from now on, saved by the next window that opens the file."""
        self.watch.stop()
        self.retry.stop()
        autosave.release(self.window)
