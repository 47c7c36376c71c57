"""Review suspects in the window: the label audit run in the background over every loaded
method, its queue in a dock, and the answers.

View ▸ Review suspects opens the dock and audits the open dataset (a new request cancels
the old one). Selecting a suspect selects the query whose ranking shows the evidence and
opens the comparison on the query and the item. Enter accepts the suggested fix through the
corrections' undo stack (:class:`~irviewer.gui.corrections.store.CorrectionsController`, so Edit ▸
Undo takes it back and the numbers re-score); Delete records "checked, the label stands" in
the reviewed file beside the corrections file (never asked again). The queue's rules are
Qt-free (:mod:`irviewer.view.review_queue`); the panel paints them. The window places the
dock beside the corrections' and gives it room (:meth:`Docks.make_room`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QObject, Signal, SignalInstance
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QWidget

from irviewer.core.audit import AuditResult, score_words
from irviewer.core.corrections import Correction, CorrectionLog, utc_now
from irviewer.core.errors import InputError, counted
from irviewer.core.evaluation import Evaluation
from irviewer.formats.reviewed_file import Reviewed, read_reviewed, reviewed_path, write_reviewed
from irviewer.gui.menus import Menus
from irviewer.gui.review.panel import ReviewPanel
from irviewer.gui.workers import Auditor
from irviewer.opening.opener import Opened
from irviewer.view.corrections import CorrectionState
from irviewer.view.result_list import ResultTile
from irviewer.view.review_queue import (
    ACCEPTED,
    ReviewQueue,
    context_query,
    detail_html,
    suspect_tiles,
)


class Shown(Protocol):
    """What the review takes from the inspector."""

    opened: Opened | None
    evaluation: Evaluation | None

    def select(self, q: int) -> None: ...
    def show_tile(self, tiles: tuple[ResultTile, ...], at: int | None,
                  sync: bool = False) -> None: ...


class Corrections(Protocol):
    """What the review takes from the corrections' store: the corrected ground truth, the
    file beside which the reviewed file is kept, and the undoable correction."""

    state: CorrectionState | None
    changed: SignalInstance

    @property
    def path(self) -> Path | None: ...
    @property
    def log(self) -> CorrectionLog | None: ...
    def undo_text(self) -> str: ...
    def correct(self, query: str, item: str, label: str, note: str = "") -> bool: ...
    def correct_all(self, corrections: Sequence[Correction], note: str = "") -> bool: ...
    def author(self) -> str: ...


class Docks(Protocol):
    """What the review takes from the window: room for its dock when it opens."""

    def make_room(self, dock: QDockWidget) -> None: ...


class ReviewUI(QObject):
    """The Review suspects dock (see the module's docstring); ``message(text)`` for the
    status line."""

    message = Signal(str)

    def __init__(self, parent: QWidget, shown: Shown, corrections: Corrections,
                 menus: Menus, docks: Docks) -> None:
        super().__init__(parent)
        self.parent_widget, self.shown, self.docks = parent, shown, docks
        self.corrections = corrections
        self.panel = ReviewPanel()
        self.dock = QDockWidget("Review suspects", parent)
        self.dock.setObjectName("review")
        self.dock.setWidget(self.panel)
        self.dock.hide()
        self.auditor = Auditor(self)
        self.queue = ReviewQueue()
        self.earlier: tuple[Reviewed, ...] = ()
        self.path: Path | None = None
        self.sync = False  # tests and screenshots: audit on the calling thread

        self.panel.run_requested.connect(self.run_or_cancel)
        self.panel.selected.connect(self.show_suspect)
        self.panel.accept_requested.connect(self.accept)
        self.panel.check_requested.connect(self.check)
        self.auditor.busy.connect(self.panel.set_busy)
        self.auditor.progress.connect(self.panel.show_progress)
        self.auditor.done.connect(self.show_result)
        self.auditor.failed.connect(lambda m: self.panel.show_status(f"Audit failed: {m}"))
        self.corrections.changed.connect(self._corrections_changed)
        self.action = QAction("&Review suspects…", parent)
        self.action.setShortcut(QKeySequence("Ctrl+Shift+R"))
        self.action.setToolTip("Find the labels the rankings say look wrong, and review them")
        self.action.triggered.connect(self.open_dock)
        menus.add_view_action(self.action)

    # -- running ---------------------------------------------------------------------------
    def open_dock(self) -> None:
        """View ▸ Review suspects: show the dock; audit when nothing was audited yet."""
        if not self.dock.isVisible():
            self.dock.show()
            self.docks.make_room(self.dock)
        self.dock.raise_()
        if not self.queue.suspects and not self.auditor.running:
            self.run()
        self.panel.focus_queue()

    def wait(self) -> None:
        """Block until a running audit ends (closing the window)."""
        self.auditor.wait()

    def run_or_cancel(self) -> None:
        """The panel's Audit / Cancel button."""
        if self.auditor.running:
            self.auditor.cancel()
            self.panel.show_status("Audit cancelled.")
        else:
            self.run()

    def run(self) -> None:
        """Audit the open dataset's corrected ground truth (as corrected now, also while
        the published one is shown) under every loaded method."""
        opened = self.shown.opened
        state = self.corrections.state
        if opened is None or not opened.methods:
            self.panel.show_status("Open a dataset with at least one method to audit it.")
            return
        dataset = state.corrected if state is not None else opened.dataset
        names = ", ".join(opened.methods)
        self.panel.show_status(f"Auditing {dataset.label()} under "
                               f"{counted(len(opened.methods), 'method')} ({names})…")
        self.auditor.audit(dataset, {n: m.ranking for n, m in opened.methods.items()},
                           sync=self.sync)

    def show_result(self, result: AuditResult) -> None:
        """Fill the queue with ``result``'s suspects, less those checked before."""
        log = self.corrections.log
        self.path = (reviewed_path(self.corrections.path)
                     if self.corrections.path is not None else None)
        self.earlier = ()
        problem = ""
        if self.path is not None:
            try:
                self.earlier = read_reviewed(self.path)
            except InputError as e:
                problem = (f" {e}; this session's checks are not saved until the file is "
                           "fixed or removed.")
                self.path = None
        self.queue = ReviewQueue(result.suspects, self.earlier,
                                 log.dataset if log is not None else None)
        self.panel.set_queue(self.queue)
        said = [f"{counted(len(self.queue.suspects), 'suspect')} under "
                f"{', '.join(result.methods)} (protocol {result.protocol}), most suspicious "
                "first. Enter accepts the fix, Delete: the label stands."]
        said += [n for n in (self.queue.note(), *result.notes) if n]
        self.panel.show_status(" ".join(said) + problem)

    # -- answering ---------------------------------------------------------------------------
    def show_suspect(self, position: int) -> None:
        """Show the suspect at ``position``: its query selected, the item beside it in the
        side-by-side window when the item has an image file (without images the window
        would only cover the queue with two names)."""
        opened = self.shown.opened
        if opened is None or position >= len(self.queue.suspects):
            return
        s = self.queue.suspects[position]
        q = context_query(opened.dataset, s)
        self.panel.show_detail(detail_html(opened.dataset, s, q))
        if q < 0:
            return
        self.shown.select(q)
        g = opened.dataset.gallery_index().get(s.item, -1)
        if self.shown.evaluation is None or g < 0:
            return
        tiles, at = suspect_tiles(self.shown.evaluation, q, g)
        if at is not None and tiles[at].path is not None:
            self.shown.show_tile(tiles, at, sync=self.sync)
            self.parent_widget.activateWindow()  # the queue keeps the keys
            self.panel.focus_queue()

    def accept(self, position: int) -> None:
        """Apply the suggested fix of the suspect at ``position`` to every list that holds
        the label (the queries sharing it), as one undoable step; the selection moves to the
        next open suspect."""
        s = self.queue.suspects[position]
        fixes = s.fixes()
        if not fixes:
            self.message.emit("This suspect has no single fix to accept: look at it, and "
                              "correct it from the tiles' menus, or press Delete")
            return
        if self.queue.state(position) == ACCEPTED:
            self.message.emit("Its fix is already in the corrected ground truth: nothing "
                              "to change")
            return
        if self.corrections.correct_all(fixes, note=f"audit: {s.kind}, score "
                                        f"{score_words(s)}"):
            self.message.emit(f"{self.corrections.undo_text()} — Ctrl+Z undoes")
            self._move_on(position)

    def check(self, position: int) -> None:
        """Mark the suspect at ``position`` "checked, the label stands" (again: unmark),
        saved at once in the reviewed file."""
        checked = self.queue.toggle_checked(position, self.corrections.author(), utc_now())
        self._save()
        self.panel.refresh()
        if checked:
            self._move_on(position)

    def _move_on(self, position: int) -> None:
        following = self.queue.next_open(position)
        self.panel.select_position(following if following is not None else position)

    def _save(self) -> None:
        if self.path is None:
            return
        try:
            write_reviewed(self.path, self.queue.records(self.earlier))
        except InputError as e:  # the folder cannot be written, the disk is full: a sentence
            self.message.emit(f"Could not save the reviewed suspects: {e}")
        except OSError as e:
            self.message.emit(f"Could not save the reviewed suspects to {self.path}: "
                              f"{e.strerror}")

    def _corrections_changed(self, _queries: object) -> None:
        """A correction, undo, redo or the switch: each suspect's fix is checked against the
        corrected ground truth now."""
        log = self.corrections.log
        if log is not None:
            self.queue.set_ground_truth(log.dataset)
        self.panel.refresh()

    def dataset_opened(self, _opened: Opened | None = None) -> None:
        """A dataset opened: the old queue goes; audit again when the dock is shown."""
        self.auditor.cancel()
        self.queue = ReviewQueue()
        self.panel.set_queue(self.queue)
        self.panel.show_status("Press Audit labels to find the labels that look wrong.")
        if self.dock.isVisible():
            self.run()
