"""Corrections in the window's hands: the tile menus and keys 1–4 (results, missed
positives, the comparison), the Corrections dock, the line with both numbers and the
published / corrected switch, the corrected marks, and the menu entries (Edit ▸ Undo /
Redo, Edit ▸ Correction author…, File ▸ Corrections file…).

The :class:`~irviewer.gui.corrections.store.CorrectionsController` makes the corrections; this
object turns what the user points at into them and shows their effect. It follows the
inspector (its re-scores and the query it shows) and asks it to re-score what a correction
changed; the window calls :meth:`take_request` before opening and :meth:`attach` once the
data is open, and places the dock and the line."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Protocol

import numpy as np
from PySide6.QtCore import QObject, QPoint, QSettings, Qt, Signal, SignalInstance
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QDockWidget, QFileDialog, QMenu, QMessageBox, QWidget

from irviewer.core.evaluation import Evaluation
from irviewer.gui.corrections.menu import RelabelDialog, add_correction_entries
from irviewer.gui.corrections.panel import CorrectionsLine, CorrectionsPanel
from irviewer.gui.corrections.store import CorrectionsController
from irviewer.gui.menus import Menus
from irviewer.gui.widgets.warning import warn
from irviewer.opening.opener import Opened
from irviewer.opening.request import OpenRequest
from irviewer.view import palette
from irviewer.view.corrections import (
    CHOICE_KEYS,
    MARK_GLYPH,
    RelabelOffer,
    both_numbers,
    corrected_items,
    log_rows,
    relabel_offer,
    uncorrectable_reason,
)
from irviewer.view.corrections_saving import Saving
from irviewer.view.result_list import ResultTile

#: The legend's entry for the corrected mark (a folded corner with a pencil).
MARK_LEGEND_HTML = (f'<span style="background:{palette.MARK_FILL}; color:{palette.WHITE}">'
                    f"&nbsp;{MARK_GLYPH}&nbsp;"
                    "</span> corrected (folded corner)")


class Shown(Protocol):
    """What the corrections take from the inspector: the query shown, its tiles, the
    re-score of the queries a correction changed, and the signals they follow."""

    evaluation: Evaluation | None
    current: int | None
    evaluation_shown: SignalInstance
    query_shown: SignalInstance
    tile_clicked: SignalInstance
    match_key: SignalInstance
    match_menu_requested: SignalInstance

    @property
    def show_ignored(self) -> bool: ...
    def rescore(self, changed: np.ndarray | None = None) -> None: ...
    def select(self, q: int) -> None: ...
    def shown_tiles(self) -> tuple[ResultTile, ...]: ...
    def selected_tile(self) -> tuple[tuple[ResultTile, ...], int] | None: ...
    def tile_menu(self, tiles: tuple[ResultTile, ...], at: int) -> QMenu: ...
    def add_tile_menu_entries(self, hook: Callable[[QMenu, ResultTile], None]) -> None: ...
    def set_marked(self, marked: frozenset[int]) -> None: ...
    def set_extra_legend(self, entries: tuple[str, ...]) -> None: ...
    def side_by_side_window(self) -> QWidget | None: ...


class CorrectionsUI(QObject):
    """Corrections in the window (see the module's docstring); ``message(text)`` for the
    status line, ``unsaved_changed(bool)`` when corrections are (or no longer are) waiting
    to be saved. ``ask_unsaved(n, why)`` decides what closing does with unsaved corrections
    ("save", "discard" or "cancel"; a dialog, tests replace it)."""

    message = Signal(str)
    unsaved_changed = Signal(bool)

    def __init__(self, parent: QWidget, settings: QSettings, shown: Shown,
                 menus: Menus) -> None:
        super().__init__(parent)
        self.parent_widget, self.shown = parent, shown
        self.controller = CorrectionsController(parent, settings)
        self.panel = CorrectionsPanel()
        self.dock = QDockWidget("Corrections", parent)
        self.dock.setObjectName("corrections")
        self.dock.setWidget(self.panel)
        self.line = CorrectionsLine()
        self.last_error: str | None = None
        self.menu: QMenu | None = None
        self.ask_unsaved = self._ask_unsaved
        self.requested: dict[Path, Path] = {}

        shown.add_tile_menu_entries(self.add_menu_entries)
        shown.evaluation_shown.connect(self.show_evaluation)
        shown.query_shown.connect(lambda q: shown.set_marked(self.marked(q)))
        shown.match_menu_requested.connect(self.comparison_menu)
        shown.match_key.connect(self.key_on)
        self.panel.jump.connect(shown.select)
        self.panel.remove.connect(self.controller.remove)
        self.line.published_toggled.connect(self.controller.show_published)
        self.controller.changed.connect(shown.rescore)
        self.controller.error.connect(self.show_error)
        self.controller.message.connect(self.message)
        self.controller.file.changed.connect(self._show_saving)
        for key in CHOICE_KEYS:
            QShortcut(QKeySequence(key), parent).activated.connect(lambda k=key: self.key(k))
        self._install_menus(menus)

    # -- the window's calls ----------------------------------------------------------------
    def take_request(self, request: OpenRequest) -> OpenRequest:
        """Return ``request`` without its corrections file, which is kept to be read once
        the data is open (:meth:`attach`): a file that cannot be read then gives a dialog
        instead of stopping the dataset from opening."""
        if request.corrections is None:
            return request
        self.requested[Path(request.dataset)] = Path(request.corrections)
        return replace(request, corrections=None)

    def attach(self, opened: Opened) -> None:
        """Take the corrections of a freshly opened dataset (the file its session names,
        the one chosen before for this dataset, else its default sidecar, when it exists);
        the request then names the file in use, so the session records it."""
        chosen = self.requested.pop(Path(opened.request.dataset), None)
        if chosen is None and self._same_dataset(opened):
            chosen = self.controller.chosen
        self.controller.attach(opened, chosen)
        self._record_path()
        self.shown.set_extra_legend(self.legend())

    def show_evaluation(self, evaluation: Evaluation, _changed: object = None) -> None:
        """Show the corrections line and the panel for the evaluation shown."""
        state = self.controller.state
        reason = uncorrectable_reason(evaluation.dataset)
        if state is None or reason:
            self.line.show_line(reason or "", False, False)
            self.panel.set_rows(())
            self.panel.set_saving(Saving(None))
            return
        self.panel.set_saving(self.controller.file.saving())
        log = state.log
        if len(log):
            html = both_numbers(state.published_evaluation(evaluation),
                                state.corrected_evaluation(evaluation),
                                state.showing_published, len(log))
        elif self.controller.file.refused:
            html = (f'<span style="color:{palette.MUTED_TEXT}">none can be made until the '
                    "corrections file is fixed: the Corrections panel says why</span>")
        else:
            html = (f'<span style="color:{palette.MUTED_TEXT}">none yet — right-click a result, '
                    "or click it and press 1–4, to set its relation to the query</span>")
        self.line.show_line(html, state.showing_published, bool(len(log)))
        self.line.set_mark(self.controller.file.saving().line_mark())
        self.panel.set_rows(log_rows(log))

    def marked(self, q: int) -> frozenset[int]:
        """Return the gallery positions of query ``q``'s corrected items."""
        state = self.controller.state
        return corrected_items(state.log, q) if state is not None else frozenset()

    def legend(self) -> tuple[str, ...]:
        """Return the legend's extra entries (the corrected mark, where it can appear)."""
        state = self.controller.state
        if state is None or uncorrectable_reason(state.published):
            return ()
        return (MARK_LEGEND_HTML,)

    # -- what the user points at -----------------------------------------------------------
    def add_menu_entries(self, menu: QMenu, tile: ResultTile) -> None:
        """The tile menu's hook: add the relation choices and the relabel entry of
        ``tile`` for the query shown, as the corrected ground truth has them (the one a
        choice edits, also while the published one is shown: the menu then says so)."""
        state = self.controller.state
        if (self.shown.current is None or self.shown.evaluation is None or state is None
                or tile.index < 0):  # a listed result outside the gallery: nothing to edit
            return
        q = self.shown.current
        add_correction_entries(menu, state.relation_menu(q, tile.index),
                               relabel_offer(state.corrected, q, tile.index),
                               uncorrectable_reason(state.corrected),
                               lambda label: self.set_relation(q, tile, label),
                               lambda offer: self.relabel_dialog(offer))

    def tile_menu(self, tiles: tuple[ResultTile, ...], at: int | None, pos: QPoint,
                  sync: bool = False) -> QMenu | None:
        """Show the window's menu of ``tiles[at]`` (with these entries) at ``pos``
        (``sync``: build it and return it without showing, for tests)."""
        if at is None:
            return None
        self.menu = self.shown.tile_menu(tiles, at)
        if not sync:
            self.menu.popup(pos)
        return self.menu

    def comparison_menu(self, tiles: tuple[ResultTile, ...], at: int | None,
                        pos: QPoint) -> None:
        """Right-click in the comparison: the correction entries of the match shown."""
        if at is None:
            return
        self.menu = QMenu(self.shown.side_by_side_window())
        self.menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.menu.addSection(tiles[at].title or tiles[at].name)
        self.add_menu_entries(self.menu, tiles[at])
        self.menu.popup(pos)

    def key(self, key: str) -> None:
        """Key 1–4 in the main window: the selected tile (the one last clicked or
        right-clicked in the query shown), whatever the mouse points at."""
        selected = self.shown.selected_tile()
        if selected is not None:
            self.key_on(*selected, key)
        else:
            self.message.emit("Click a result to select it, then press 1–4 to set its "
                              "relation to the query")

    def key_on(self, tiles: tuple[ResultTile, ...], at: int | None, key: str) -> None:
        """Set ``tiles[at]``'s relation to the query shown to the family's choice ``key``."""
        state = self.controller.state
        if (at is None or self.shown.current is None or self.shown.evaluation is None
                or state is None):
            return
        tile, q = tiles[at], self.shown.current
        choices = {c.key: c for c in state.relation_menu(q, tile.index).choices}
        if key in choices:
            self.set_relation(q, tile, choices[key].label)

    def set_relation(self, q: int, tile: ResultTile, label: str) -> None:
        """Correct ``tile``'s relation to query ``q`` to ``label`` in the corrected ground
        truth (undoably; the corrected ground truth is shown after it); the status bar says
        what changed, where an item made ignored went, or that nothing had to change."""
        state = self.controller.state
        assert state is not None
        if not self.controller.correct(state.corrected.queries[q].name, tile.name, label):
            return
        hidden = (self.shown.evaluation is not None and not self.shown.show_ignored
                  and tile.index not in {t.index for t in self.shown.shown_tiles()})
        replacing = (f", {self.controller.replacing}" if self.controller.replacing else "")
        file = self.controller.file
        self.message.emit(f"{self.controller.undo_text()}{replacing} — Ctrl+Z undoes"
                          + (" · now ignored, so hidden: press I to show ignored items"
                             if hidden else "")
                          + (f" · not saved yet: {file.why}" if file.unsaved else ""))

    def relabel_dialog(self, offer: RelabelOffer) -> None:
        """Ask for the image's new label (showing how many queries it changes in the
        corrected ground truth) and relabel it for every query."""
        state = self.controller.state
        assert state is not None
        dialog = RelabelDialog(self.parent_widget, state.corrected, offer)
        if dialog.exec():
            self.controller.correct("", offer.item, dialog.new_label(), dialog.note())

    def choose_file_dialog(self) -> None:
        """File ▸ Corrections file…: where this dataset's corrections are kept."""
        if self.controller.state is None:
            self.message.emit("Open a dataset first")
            return
        path, _ = QFileDialog.getSaveFileName(
            self.parent_widget, "Corrections file (an existing one is loaded)",
            str(self.controller.path), "Corrections (*.csv)",
            options=QFileDialog.Option.DontConfirmOverwrite)
        if path:
            self.controller.choose_file(Path(path))
            self._record_path()
            self._show_saving()

    def _record_path(self) -> None:
        """Name the corrections file in use in the open request (the session keeps it)."""
        opened = self.controller.state.opened if self.controller.state is not None else None
        if opened is not None:
            opened.request = replace(opened.request, corrections=self.controller.path)

    def stop_watching(self) -> None:
        """Stop looking for corrections other writers save and retrying a save (the
        window is closing)."""
        self.controller.file.stop()

    def close(self) -> bool:
        """The window closes: return False to keep it open. Corrections not saved yet are
        tried once more; if they still cannot be saved, ``ask_unsaved`` decides: Save (try
        again; when it still fails they stay in the autosave, saved by the next window
        that opens this file), Discard (they are lost) or Cancel."""
        file = self.controller.file
        if not file.unsaved or file.save():
            return True
        answer = self.ask_unsaved(file.unsaved, file.why)
        if answer == "cancel":
            return False
        if answer == "discard":
            file.discard_unsaved()
        elif not file.save():
            self.message.emit(f"{file.why}: the unsaved corrections stay in the autosave and "
                              "are saved the next time this dataset's corrections are opened")
        return True

    def _ask_unsaved(self, count: int, why: str) -> str:
        """Ask what to do with ``count`` unsaved corrections: "save", "discard" or
        "cancel"."""
        buttons = (QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                   | QMessageBox.StandardButton.Cancel)
        what = "1 correction is" if count == 1 else f"{count} corrections are"
        answer = QMessageBox.question(
            self.parent_widget, "irviewer — corrections",
            f"{what} not saved yet: {why}.\n\nSave tries again; if the file is still "
            "busy they stay in irviewer's autosave and are saved the next time this "
            "dataset's corrections are opened. Discard loses them.",
            buttons, QMessageBox.StandardButton.Save)
        return {QMessageBox.StandardButton.Save: "save",
                QMessageBox.StandardButton.Discard: "discard"}.get(answer, "cancel")

    def _show_saving(self) -> None:
        """Say in the panel, the corrections line and the title whether every correction
        is saved, and where."""
        saving = self.controller.file.saving()
        if self.controller.state is not None:
            self.panel.set_saving(saving)
            self.line.set_mark(saving.line_mark())
        self.unsaved_changed.emit(bool(saving.unsaved))

    def show_error(self, message: str) -> None:
        """Show a corrections problem in a dialog (non-blocking)."""
        self.last_error = message
        warn(self.parent_widget, message, "irviewer — corrections")

    def _install_menus(self, menus: Menus) -> None:
        """File ▸ Corrections file…, the Edit menu (undo, redo, author), View ▸ the dock."""
        parent = self.parent_widget
        choose = QAction("&Corrections file…", parent)
        choose.triggered.connect(self.choose_file_dialog)
        menus.add_file_action(choose)
        edit = QMenu("&Edit", parent)
        menus.add_menu(edit)
        undo = self.controller.stack.createUndoAction(parent, "&Undo")
        undo.setShortcut(QKeySequence.StandardKey.Undo)
        redo = self.controller.stack.createRedoAction(parent, "&Redo")
        redo.setShortcut(QKeySequence("Ctrl+Shift+Z"))
        author = QAction("Correction &author…", parent)
        author.triggered.connect(self.controller.ask_author)
        for action in (undo, redo):
            edit.addAction(action)
        edit.addSeparator()
        edit.addAction(author)
        menus.add_view_action(self.dock.toggleViewAction())

    def _same_dataset(self, opened: Opened) -> bool:
        state = self.controller.state
        return state is not None and state.opened.request.dataset == opened.request.dataset
