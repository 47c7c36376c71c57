"""Label corrections in the window: the undo stack around the core's commands, the sidecar
file written after every change, loading it when a dataset opens, and the author.

:class:`CorrectionsController` holds one open dataset's
:class:`~irviewer.view.corrections.CorrectionState`. Every correction, its undo and its
deletion is a :class:`CorrectionUndo` on a ``QUndoStack`` (Edit ▸ Undo / Redo) wrapping the
core's Qt-free command; each re-scores only the queries it touches and emits
``changed(queries)``. Corrections always edit the corrected ground truth, also while the
published one is shown; one that would set what is already there is not pushed and not
written (the core's rule, :meth:`~irviewer.core.corrections.CorrectionLog.check`). The
corrections file (default ``<dataset>.corrections.csv``, kept in the user's data folder when
the dataset's folder cannot be written, or the one chosen with File ▸ Corrections file…) is
written atomically after each change, merged under a lock with what other writers (another
window, another annotator on a shared folder) saved since this window last read it
(:mod:`irviewer.formats.corrections_merge`); what they saved is taken into this window,
re-scored and said in the status line, also between this window's own saves (the file is
looked at every :data:`WATCH_MS` ms). A file that cannot be read gives ``error(sentence)``;
the corrections already made stay, and the bad file is never overwritten.
"""

from __future__ import annotations

import getpass
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PySide6.QtCore import QObject, QSettings, QTimer, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack
from PySide6.QtWidgets import QInputDialog, QWidget

from irviewer.core.corrections import (
    BatchCorrectionCommand,
    Correction,
    CorrectionCommand,
    CorrectionLog,
    NothingToChangeError,
    RemoveCorrectionCommand,
    applied_summary,
    utc_now,
)
from irviewer.core.errors import InputError
from irviewer.formats.corrections_file import (
    LoadedCorrections,
    corrections_place,
    load_corrections,
)
from irviewer.formats.corrections_merge import Merged, merge, read_disk, save_merged
from irviewer.opening.opener import Opened
from irviewer.view.corrections import Command, CorrectionState

AUTHOR_KEY = "corrections/author"
#: How often the window looks for corrections other writers saved to its file (ms).
WATCH_MS = 2000


class CorrectionUndo(QUndoCommand):
    """One correction (or the deletion of one) on the undo stack, pushed after the
    controller ran it once (so a correction the core refuses, or one that sets what is
    already there, never reaches the stack): ``redo`` runs the core command's ``do`` again
    (the first call, from ``QUndoStack.push``, is skipped), ``undo`` its ``undo``."""

    def __init__(self, controller: CorrectionsController,
                 command: Command) -> None:
        super().__init__(command.label)
        self.controller, self.command = controller, command
        self.done_once = True

    def redo(self) -> None:
        if self.done_once:
            self.done_once = False
            return
        self.controller.run(self.command, undo=False)

    def undo(self) -> None:
        self.controller.run(self.command, undo=True)


class CorrectionsController(QObject):
    """Corrections of the open dataset, undoable, autosaved.

    Signals: ``changed(queries)`` (an int array of the query positions re-scored) after a
    correction, an undo, a deletion or the published/corrected switch; ``error(sentence)``
    for a file that cannot be read or a correction the dataset's rules refuse;
    ``message(text)`` for the status bar (how many corrections were applied on opening).
    """

    changed = Signal(object)
    error = Signal(str)
    message = Signal(str)

    def __init__(self, parent: QWidget, settings: QSettings) -> None:
        super().__init__(parent)
        self.parent_widget = parent
        self.settings = settings
        self.stack = QUndoStack(self)
        self.state: CorrectionState | None = None
        self.path: Path | None = None
        self.chosen: Path | None = None  # File ▸ Corrections file…, kept in the session
        self._where = ""  # while attaching: where the corrections are kept, if not beside
        # What the file held when this window last read or wrote it: the base of the merge
        # with what other writers added since (formats.corrections_merge).
        self.base: tuple[Correction, ...] = ()
        self._seen: tuple[float, int] | None = None  # the file's (mtime, size) then
        self.watch = QTimer(self)
        self.watch.setInterval(WATCH_MS)
        self.watch.timeout.connect(self.look_for_others)
        self.watch.start()

    # -- opening -------------------------------------------------------------------------
    def attach(self, opened: Opened, chosen: Path | None = None) -> None:
        """Take the corrections of a freshly opened dataset: those the opening applied, or
        the chosen file's (else the default sidecar's) when it exists."""
        self.stack.clear()
        self.chosen = chosen
        self.base, self._seen = (), None
        if opened.corrections is not None:
            self.path = opened.corrections.path
            self.state = CorrectionState(opened, opened.corrections.log)
            self._read_base(self.path)
            self._applied(opened.corrections)
            return
        self.state = CorrectionState(opened)
        if chosen is not None:
            self.path = chosen
            if chosen.is_file():
                self._load(chosen)
            return
        place = corrections_place(opened.request.dataset)
        self.path = place.path
        self._where = place.sentence()  # where, when the dataset's folder is read-only
        if place.existing is not None:
            self._load(place.existing, save_to=place.path)
        elif self._where:
            self.message.emit(_capital(self._where))
        self._where = ""

    def choose_file(self, path: Path) -> None:
        """File ▸ Corrections file…: keep the corrections in ``path`` from now on. An
        existing file's corrections replace the current ones (a bad file: a dialog, and the
        current ones stay); a new file receives the current ones."""
        if self.state is None:
            return
        path = Path(path)
        if path.is_file():
            if self._load(path):
                self.chosen = path
            return
        self.path = self.chosen = path
        self.base, self._seen = (), None
        self._save()
        self.message.emit(f"Corrections are saved to {path}")

    def _load(self, path: Path, save_to: Path | None = None) -> bool:
        """Apply the corrections of ``path`` over the published ground truth and save the
        next ones to ``save_to`` (None: ``path``); True when read. A bad file leaves the
        current corrections and is never overwritten."""
        assert self.state is not None
        try:
            loaded = load_corrections(path, self.state.published)
        except InputError as e:
            self.path = _spare_path(save_to or path)
            self.error.emit(f"{e}. The corrections already made stay; new ones are saved to "
                            f"{self.path.name}.")
            return False
        previous = self.state.log.changed_queries()
        self.stack.clear()
        opened = self.state.opened
        opened.update_ground_truth(self.state.published, previous.tolist())
        self.state = CorrectionState(opened, loaded.log)
        self.path = save_to or path
        self._read_base(path if self.path == path else None)
        self._applied(loaded)
        self.changed.emit(np.union1d(previous, loaded.log.changed_queries()))
        return True

    def _applied(self, loaded: LoadedCorrections) -> None:
        """Say how many corrections the file applied, and which rows changed nothing."""
        assert self.state is not None and self.path is not None
        said = [f"{self.path.name}: {applied_summary(self.state.log)}"] if len(
            self.state.log) else []
        said += [note.removeprefix(f"{self.path.name}: ") if said else note
                 for note in loaded.notes()]
        if self._where:
            said.append(self._where if said else _capital(self._where))
        if said:
            self.message.emit("; ".join(said))

    # -- corrections -----------------------------------------------------------------------
    def correct(self, query: str, item: str, label: str, note: str = "") -> bool:
        """Set ``item``'s relation to ``query`` to ``label`` (a group or ``negative``;
        ``query`` "" relabels the image) in the corrected ground truth, whichever is shown,
        as one undoable step; return True when it was made. A correction that sets what the
        corrected ground truth already has is neither an undo step nor written: the status
        bar says so (``message``); one the dataset's rules refuse gives ``error``."""
        if self.state is None:
            return False
        try:
            self.state.log.check(Correction(query, item, label))  # before asking the author
            correction = Correction(query, item, label, self.author(), utc_now(), note)
            return self._run_new(CorrectionCommand(correction))
        except NothingToChangeError as e:
            self.message.emit(self.state.nothing_to_change(e))
        except InputError as e:
            self.error.emit(str(e))
        return False

    def correct_all(self, corrections: Sequence[Correction], note: str = "") -> bool:
        """Apply ``corrections`` (the fix of one problem in every list that holds it) as one
        undoable step, the author and time set on each; return True when any was made.
        Those that set what is already there are left out; when all do, the status bar
        says so (``message``); one the dataset's rules refuse gives ``error``."""
        if self.state is None or not corrections:
            return False
        if len(corrections) == 1:
            c = corrections[0]
            return self.correct(c.query, c.item, c.label, note)
        try:
            if all(_sets_nothing(self.state.log, c) for c in corrections):
                self.state.log.check(corrections[0])  # raises NothingToChangeError
            author, now = self.author(), utc_now()
            batch = BatchCorrectionCommand([Correction(c.query, c.item, c.label, author, now,
                                                       note) for c in corrections])
            return self._run_new(batch)
        except NothingToChangeError as e:
            self.message.emit(self.state.nothing_to_change(e))
        except InputError as e:
            self.error.emit(str(e))
        return False

    def remove(self, position: int) -> None:
        """Delete the correction at ``position`` of the log (it is reverted), undoably."""
        if self.state is not None and 0 <= position < len(self.state.log):
            try:
                self._run_new(RemoveCorrectionCommand(position))
            except InputError as e:
                self.error.emit(str(e))

    def _run_new(self, command: Command) -> bool:
        """Run a new ``command`` once, then put it on the undo stack; save and re-score.
        NothingToChangeError and InputError propagate, with nothing pushed or saved."""
        assert self.state is not None
        changed = self.state.do(command)
        self.stack.push(CorrectionUndo(self, command))
        self._save()
        self.changed.emit(changed)
        return True

    def show_published(self, on: bool) -> None:
        """Show the published ground truth (``on``) or the corrected one."""
        if self.state is not None:
            self.changed.emit(self.state.show_published(on))

    def run(self, command: Command, undo: bool) -> None:
        """Run ``command`` (for :class:`CorrectionUndo`): re-score, save, tell the window,
        and say in the status line what was undone or redone."""
        assert self.state is not None
        changed = self.state.undo(command) if undo else self.state.do(command)
        self._save()
        self.changed.emit(changed)
        self.message.emit(f"Undone: {command.label} — Ctrl+Shift+Z redoes" if undo
                          else f"Redone: {command.label} — Ctrl+Z undoes")

    def undo_text(self) -> str:
        """Return the text of the correction Edit ▸ Undo would undo."""
        return self.stack.undoText()

    @property
    def log(self) -> CorrectionLog | None:
        """Return the open dataset's corrections log (None: nothing open)."""
        return self.state.log if self.state is not None else None

    # -- the file, other writers and the author ---------------------------------------------
    def _save(self) -> None:
        """Merge this window's corrections into the file under its lock (what other writers
        added since it was last read is kept, and taken into this window) and write it."""
        assert self.state is not None and self.path is not None
        try:
            merged = save_merged(self.path, self.base, self.state.log.saved())
        except InputError as e:  # a bad file, a lock held too long, an unwritable folder
            self.error.emit(f"Could not save the corrections: {e}")
            return
        except OSError as e:
            self.error.emit(f"Could not save the corrections to {self.path}: {e.strerror}")
            return
        self._took(merged)

    def look_for_others(self) -> None:
        """Take in what other writers saved to the file since this window last read it
        (the watch timer; re-scored, said in the status line)."""
        if self.state is None or self.path is None or self._stamp() == self._seen:
            return
        try:
            disk = read_disk(self.path)
        except InputError:
            return  # being replaced this instant, or broken: the next save says so
        self._took(merge(self.base, self.state.log.saved(), disk))

    def _took(self, merged: Merged) -> None:
        """Make ``merged.rows`` (the file now) this window's base; apply what other writers
        did to the log and re-score: added corrections go first in the log (this window's
        undo steps stay valid); a replacement or a deletion rebuilds the log and clears
        the undo history. Each re-scores the queries it changes."""
        assert self.state is not None
        self.base, self._seen = merged.rows, self._stamp()
        if not merged.theirs:
            if merged.kept:
                self.message.emit(merged.sentence())
            return
        rebuild = bool(merged.replaced or merged.removed)
        try:
            if rebuild:
                self.stack.clear()
                changed = self.state.replace_all(merged.rows)
            else:
                changed = self.state.add_first(merged.added)
        except InputError as e:
            self.error.emit(f"Could not take in the corrections another writer saved to "
                            f"{self.path}: {e}")
            return
        self.message.emit(merged.sentence() + (
            " (the undo history was cleared)" if rebuild else ""))
        self.changed.emit(changed)

    def _read_base(self, path: Path | None) -> None:
        """Take what the file at ``path`` holds as this window's base (None: nothing)."""
        try:
            self.base = read_disk(path) if path is not None else ()
        except InputError:
            self.base = ()
        self._seen = self._stamp()

    def _stamp(self) -> tuple[float, int] | None:
        """Return the corrections file's (mtime, size) (None: no file)."""
        try:
            st = self.path.stat() if self.path is not None else None
        except OSError:
            return None
        return None if st is None else (st.st_mtime, st.st_size)

    def author(self) -> str:
        """Return the corrections' author: from the settings, asked once (the login name
        offered)."""
        name = str(self.settings.value(AUTHOR_KEY, "") or "")
        if not name:
            name = self.ask_author()
        return name

    def ask_author(self) -> str:
        """Ask for the author's name (Edit ▸ Correction author…), keep it in the settings."""
        current = str(self.settings.value(AUTHOR_KEY, "") or "") or _login()
        name, ok = QInputDialog.getText(
            self.parent_widget, "Correction author",
            "Your name, written beside each correction in the corrections file:",
            text=current)
        name = name.strip() if ok and name.strip() else current
        self.settings.setValue(AUTHOR_KEY, name)
        return name


def _sets_nothing(log: CorrectionLog, correction: Correction) -> bool:
    """Return True when ``correction`` would set what the corrected ground truth has."""
    try:
        log.check(correction)
    except NothingToChangeError:
        return True
    return False


def _login() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return ""


def _capital(sentence: str) -> str:
    return sentence[:1].upper() + sentence[1:]


def _spare_path(path: Path) -> Path:
    """Return a file name beside ``path`` that does not exist yet, for saving new
    corrections without overwriting a file that could not be read."""
    for n in range(2, 1000):
        candidate = path.with_name(path.name.replace(".csv", f"-{n}.csv"))
        if not candidate.exists():
            return candidate
    return path.with_name(path.name + ".new")
