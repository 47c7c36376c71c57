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
kept by a :class:`~irviewer.gui.corrections.sidecar.Sidecar`: saved after each change without
ever blocking the window, merged under a lock with what other writers (another window,
another annotator on a shared folder) saved since this window last read it; what they saved
is taken into this window, re-scored and said in the status line, naming the writer. A file
that cannot be read changes nothing: chosen with File ▸ Corrections file…, the file in use
stays; read when the dataset opens, no correction can be made until it is fixed (it is read
again as soon as it changes) or another file is chosen. Such a file is never overwritten.
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
from irviewer.core.errors import InputError, counted
from irviewer.formats.corrections_file import (
    LoadedCorrections,
    corrections_place,
    load_corrections,
)
from irviewer.formats.corrections_merge import Merged, writer
from irviewer.gui.corrections.sidecar import Sidecar
from irviewer.opening.opener import Opened
from irviewer.view.corrections import Command, CorrectionState

AUTHOR_KEY = "corrections/author"


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
        self.chosen: Path | None = None  # File ▸ Corrections file…, kept in the session
        self.file = Sidecar(self, self._ours, self._took, self._reload)
        self.file.message.connect(self.message)
        self.file.error.connect(self.error)
        self.replacing = ""  # what the last correction replaced, in words ("" when nothing)

    @property
    def path(self) -> Path | None:
        """Return the corrections file in use (None: no dataset open)."""
        return self.file.path

    @property
    def watch(self) -> QTimer:
        """Return the timer that looks for what other writers saved."""
        return self.file.watch

    # -- opening -------------------------------------------------------------------------
    def attach(self, opened: Opened, chosen: Path | None = None) -> None:
        """Take the corrections of a freshly opened dataset: those the opening applied, or
        the chosen file's (else the default sidecar's) when it exists; then save what
        windows now gone left unsaved for that file. Corrections of the data shown before
        that could not be saved stay in the autosave, for the next opening of their file."""
        left = self.file.leave_unsaved()
        self.stack.clear()
        self.chosen = chosen
        if opened.corrections is not None:
            self.state = CorrectionState(opened, opened.corrections.log)
            self.file.use(opened.corrections.path, opened.corrections.path)
            self._applied(opened.corrections)
        elif chosen is not None:
            self.state = CorrectionState(opened)
            self.file.use(chosen)
            if chosen.is_file():
                self._load(chosen, opening=True)
        else:
            self.state = CorrectionState(opened)
            place = corrections_place(opened.request.dataset)
            self.file.use(place.path, where=place.sentence())
            if place.existing is not None:
                self._load(place.existing, save_to=place.path, opening=True)
            elif place.sentence():
                self.message.emit(_capital(place.sentence()))
        self.file.recover_orphans()
        if left:
            self.error.emit(_capital(left))

    def choose_file(self, path: Path) -> None:
        """File ▸ Corrections file…: keep the corrections in ``path`` from now on. An
        existing file's corrections replace the current ones; a file that cannot be read
        changes nothing (a dialog says why; the file in use stays). A new file receives the
        current ones."""
        if self.state is None:
            return
        path = Path(path)
        if path.is_file():
            unsaved = self.file.unsaved
            if unsaved and not self.file.save():
                self.error.emit(f"{counted(unsaved, 'correction')} could not be saved yet "
                                f"({self.file.why}); choose another file once "
                                f"{'it is' if unsaved == 1 else 'they are'} saved, so that "
                                "none is lost")
                return
            if self._load(path):
                self.chosen = path
            return
        self.chosen = path
        self.file.use(path)
        self.file.save()
        self.message.emit(f"Corrections are saved to {path}")

    def _load(self, path: Path, save_to: Path | None = None, opening: bool = False) -> bool:
        """Apply the corrections of ``path`` over the published ground truth and save the
        next ones to ``save_to`` (None: ``path``); True when read. A file that cannot be
        read changes nothing and is never overwritten: chosen (``opening`` False), the file
        in use stays; read on ``opening``, no correction can be made until it is fixed."""
        assert self.state is not None
        try:
            loaded = load_corrections(path, self.state.published)
        except InputError as e:
            if opening:
                self.file.refuse(path, f"{path.name} could not be read ({e}).")
                self.error.emit(f"{e}. Nothing was changed and the file will not be "
                                "overwritten; no correction can be made until it is fixed "
                                "(irviewer reads it again as soon as it changes) or another "
                                "file is chosen (File ▸ Corrections file…).")
            else:
                kept = self.file.path
                self.error.emit(f"{e}. Nothing was changed: the corrections stay as they were"
                                + (f", saved to {kept}." if kept is not None else "."))
            return False
        previous = self.state.log.changed_queries()
        self.stack.clear()
        opened = self.state.opened
        opened.update_ground_truth(self.state.published, previous.tolist())
        self.state = CorrectionState(opened, loaded.log)
        target = save_to or path
        self.file.use(target, path if target == path else None, self.file.where)
        self._applied(loaded)
        self.changed.emit(np.union1d(previous, loaded.log.changed_queries()))
        if target != path and len(loaded.log):
            self.file.save()  # corrections read beside a now read-only dataset move on
        return True

    def _reload(self) -> None:
        """The file that could not be read changed: read it again (the watch); removed, a
        new one is made with the next correction."""
        path = self.file.path
        if self.state is None or path is None:
            return
        if not path.exists():
            self.file.use(path, where=self.file.where)
            self.message.emit(f"{path.name} was removed; corrections can be made again (a "
                              "new file is made with the first one)")
        elif self._load(path, opening=True):
            self.message.emit(f"{path.name} can be read again; corrections can be made")

    def _applied(self, loaded: LoadedCorrections) -> None:
        """Say how many corrections the file applied, and which rows changed nothing."""
        assert self.state is not None and self.path is not None
        where = self.file.where
        said = [f"{self.path.name}: {applied_summary(self.state.log)}"] if len(
            self.state.log) else []
        said += [note.removeprefix(f"{self.path.name}: ") if said else note
                 for note in loaded.notes()]
        if where:
            said.append(where if said else _capital(where))
        if said:
            self.message.emit("; ".join(said))

    # -- corrections -----------------------------------------------------------------------
    def correct(self, query: str, item: str, label: str, note: str = "") -> bool:
        """Set ``item``'s relation to ``query`` to ``label`` (a group or ``negative``;
        ``query`` "" relabels the image) in the corrected ground truth, whichever is shown,
        as one undoable step; return True when it was made. A correction that sets what the
        corrected ground truth already has is neither an undo step nor written: the status
        bar says so (``message``); one the dataset's rules refuse gives ``error``."""
        if not self._can_correct():
            return False
        assert self.state is not None
        try:
            self.state.log.check(Correction(query, item, label))  # before asking the author
            before = self._row_of((query, item))
            made = self._run_new(CorrectionCommand(self._made(query, item, label, note)))
            self.replacing = (f"replacing the correction made by {writer(before)}"
                              if made and before is not None
                              and before.window != self.file.window else "")
            return made
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
        if not corrections or not self._can_correct():
            return False
        assert self.state is not None
        if len(corrections) == 1:
            c = corrections[0]
            return self.correct(c.query, c.item, c.label, note)
        try:
            if all(_sets_nothing(self.state.log, c) for c in corrections):
                self.state.log.check(corrections[0])  # raises NothingToChangeError
            self.author()  # asked once, before the batch is made
            batch = BatchCorrectionCommand([self._made(c.query, c.item, c.label, note)
                                            for c in corrections])
            return self._run_new(batch)
        except NothingToChangeError as e:
            self.message.emit(self.state.nothing_to_change(e))
        except InputError as e:
            self.error.emit(str(e))
        return False

    def _can_correct(self) -> bool:
        """Return True when a correction can be made now: a dataset is open and its
        corrections file could be read (else the dialog says why again). What other
        writers saved is taken in first, so the correction starts from the file's labels."""
        if self.state is None:
            return False
        if self.file.refused:
            self.error.emit(f"{self.file.refused} No correction can be made until it is "
                            "fixed or another file is chosen (File ▸ Corrections file…).")
            return False
        self.file.look()
        return True

    def _made(self, query: str, item: str, label: str, note: str) -> Correction:
        """Return a correction made now in this window: its author, time (UTC), note, and
        the login name, machine and window that made it."""
        return Correction(query, item, label, self.author(), utc_now(), note, _login(),
                          self.file.machine, self.file.window)

    def _row_of(self, key: tuple[str, str]) -> Correction | None:
        """Return the row the file would hold for ``key`` now (None: none)."""
        assert self.state is not None
        return next((c for c in self.state.log.saved() if c.key == key), None)

    def remove(self, position: int) -> None:
        """Delete the correction at ``position`` of the log (it is reverted), undoably."""
        if self.state is not None and not self.file.refused and 0 <= position < len(
                self.state.log):
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
        """Save this window's corrections (never blocking: see :class:`Sidecar`)."""
        self.file.save()

    def look_for_others(self) -> None:
        """Take in what other writers saved to the file since this window last read it
        (the watch timer; re-scored, said in the status line)."""
        self.file.look()

    def _ours(self) -> tuple[Correction, ...]:
        return self.state.log.saved() if self.state is not None else ()

    def _took(self, merged: Merged) -> None:
        """Apply what other writers did (``merged``, the file now) to the log and re-score:
        added corrections go first in the log (this window's undo steps stay valid); a
        replacement or a deletion rebuilds the log and clears the undo history. Each
        re-scores the queries it changes; the status line says what they did, naming them."""
        assert self.state is not None
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

    def unsaved(self) -> int:
        """Return how many corrections are not in the file yet."""
        return self.file.unsaved

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


