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
written atomically after each change. A file that cannot be read gives ``error(sentence)``;
the corrections already made stay, and the bad file is never overwritten.
"""

from __future__ import annotations

import getpass
from pathlib import Path

import numpy as np
from PySide6.QtCore import QObject, QSettings, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack
from PySide6.QtWidgets import QInputDialog, QWidget

from irviewer.core.corrections import (
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
    write_corrections,
)
from irviewer.gui.workers import Worker
from irviewer.opening.opener import Opened
from irviewer.view.corrections import CorrectionState

AUTHOR_KEY = "corrections/author"


class CorrectionUndo(QUndoCommand):
    """One correction (or the deletion of one) on the undo stack, pushed after the
    controller ran it once (so a correction the core refuses, or one that sets what is
    already there, never reaches the stack): ``redo`` runs the core command's ``do`` again
    (the first call, from ``QUndoStack.push``, is skipped), ``undo`` its ``undo``."""

    def __init__(self, controller: CorrectionsController,
                 command: CorrectionCommand | RemoveCorrectionCommand) -> None:
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


def save_corrections(path: Path, corrections: tuple[Correction, ...]) -> str | None:
    """Write one snapshot of the corrections (an immutable tuple) to ``path``, atomically;
    return None, or the sentence saying why it could not be written."""
    try:
        write_corrections(path, corrections)
    except InputError as e:  # the folder cannot be written, the disk is full: a sentence
        return f"Could not save the corrections: {e}"
    except OSError as e:
        return f"Could not save the corrections to {path}: {e.strerror}"
    return None


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
        # One writer thread: saves run in order, off the GUI thread, each atomic.
        self.saver = Worker(self, every=True)
        self.saver.done.connect(self._saved)
        self.saver.failed.connect(lambda message: self.error.emit(str(message)))

    # -- opening -------------------------------------------------------------------------
    def attach(self, opened: Opened, chosen: Path | None = None) -> None:
        """Take the corrections of a freshly opened dataset: those the opening applied, or
        the chosen file's (else the default sidecar's) when it exists."""
        self.stack.clear()
        self.chosen = chosen
        if opened.corrections is not None:
            self.path = opened.corrections.path
            self.state = CorrectionState(opened, opened.corrections.log)
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

    def remove(self, position: int) -> None:
        """Delete the correction at ``position`` of the log (it is reverted), undoably."""
        if self.state is not None and 0 <= position < len(self.state.log):
            try:
                self._run_new(RemoveCorrectionCommand(position))
            except InputError as e:
                self.error.emit(str(e))

    def _run_new(self, command: CorrectionCommand | RemoveCorrectionCommand) -> bool:
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

    def run(self, command: CorrectionCommand | RemoveCorrectionCommand, undo: bool) -> None:
        """Run ``command`` (for :class:`CorrectionUndo`): re-score, save, tell the window."""
        assert self.state is not None
        changed = self.state.undo(command) if undo else self.state.do(command)
        self._save()
        self.changed.emit(changed)

    def undo_text(self) -> str:
        """Return the text of the correction Edit ▸ Undo would undo."""
        return self.stack.undoText()

    @property
    def log(self) -> CorrectionLog | None:
        """Return the open dataset's corrections log (None: nothing open)."""
        return self.state.log if self.state is not None else None

    # -- the file and the author -----------------------------------------------------------
    def _save(self) -> None:
        """Write the corrections to the file (in the writer thread, in order)."""
        assert self.state is not None and self.path is not None
        path, snapshot = self.path, self.state.log.saved()
        self.saver.run(lambda: save_corrections(path, snapshot),
                       "not enough memory to save the corrections; close other programs")

    def _saved(self, failure: str | None) -> None:
        if failure is not None:
            self.error.emit(failure)

    def wait_saved(self) -> None:
        """Block until every correction made is in the file (closing, tests)."""
        self.saver.wait()

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
