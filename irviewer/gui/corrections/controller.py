"""Corrections in the window's hands: the tile menus and keys 1–4 (results, missed
positives, the comparison), the Corrections dock, the line with both numbers and the
published / corrected switch, the corrected marks, and the menu entries (Edit ▸ Undo /
Redo, Edit ▸ Correction author…, File ▸ Corrections file…).

The :class:`~irviewer.gui.corrections.store.CorrectionsController` makes the corrections; this
object turns what the user points at into them and shows their effect. The window calls
:meth:`attach` when a dataset is open, :meth:`show_evaluation` when it re-scores and
:meth:`marked` when it shows a query."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QPoint, Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QDockWidget, QFileDialog, QMenu, QMessageBox

from irviewer.core.evaluation import Evaluation
from irviewer.gui.corrections.menu import RelabelDialog, add_correction_entries
from irviewer.gui.corrections.panel import CorrectionsLine, CorrectionsPanel
from irviewer.gui.corrections.store import CorrectionsController
from irviewer.opening.opener import Opened, OpenRequest
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
from irviewer.view.result_list import ResultTile

if TYPE_CHECKING:
    from irviewer.gui.main_window import MainWindow

#: The legend's entry for the corrected mark (a folded corner with a pencil).
MARK_LEGEND_HTML = (f'<span style="background:#1a1a1a; color:white">&nbsp;{MARK_GLYPH}&nbsp;'
                    "</span> corrected (folded corner)")


class CorrectionsUI(QObject):
    """Wires corrections into ``window`` (see the module's docstring)."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.w = window
        self.controller = CorrectionsController(window, window.settings)
        self.panel = CorrectionsPanel()
        self.dock = QDockWidget("Corrections", window)
        self.dock.setObjectName("corrections")
        self.dock.setWidget(self.panel)
        window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.dock)
        window.resizeDocks([self.dock], [150], Qt.Orientation.Vertical)
        self.line = CorrectionsLine()
        self.last_error: str | None = None
        self.last_clicked: tuple[int, tuple[ResultTile, ...], int] | None = None
        self.menu: QMenu | None = None
        self.requested: dict[Path, Path] = {}

        window.tile_menu_hooks.append(self.add_menu_entries)
        window.results.tile_clicked.connect(self._remember_click)
        window.comparison.menu_requested.connect(self.comparison_menu)
        window.comparison.relation_key.connect(self.key_on)
        self.panel.jump.connect(self.jump)
        self.panel.remove.connect(self.controller.remove)
        self.line.published_toggled.connect(self.controller.show_published)
        self.controller.changed.connect(lambda queries: window.rescore(queries))
        self.controller.error.connect(self.show_error)
        self.controller.message.connect(window.show_message)
        for key in CHOICE_KEYS:
            QShortcut(QKeySequence(key), window, activated=lambda k=key: self.key(k))

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
        self.last_clicked = None
        chosen = self.requested.pop(Path(opened.request.dataset), None)
        if chosen is None and self._same_dataset(opened):
            chosen = self.controller.chosen
        self.controller.attach(opened, chosen)
        self._record_path()

    def show_evaluation(self, evaluation: Evaluation) -> None:
        """Show the corrections line and the panel for the evaluation shown."""
        state = self.controller.state
        reason = uncorrectable_reason(evaluation.dataset)
        if state is None or reason:
            self.line.show_line(reason or "", False, False)
            self.panel.set_rows(())
            return
        log = state.log
        if len(log):
            html = both_numbers(state.published_evaluation(evaluation),
                                state.corrected_evaluation(evaluation),
                                state.showing_published, len(log))
        else:
            html = ('<span style="color:#555">none yet — right-click a result, or press 1–4 '
                    "over it, to set its relation to the query</span>")
        self.line.show_line(html, state.showing_published, bool(len(log)))
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
        if self.w.current is None or self.w.evaluation is None or state is None:
            return
        q = self.w.current
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
        self.menu = self.w.tile_menu(tiles, at)
        if not sync:
            self.menu.popup(pos)
        return self.menu

    def comparison_menu(self, tiles: tuple[ResultTile, ...], at: int | None,
                        pos: QPoint) -> None:
        """Right-click in the comparison: the correction entries of the match shown."""
        if at is None:
            return
        self.menu = QMenu(self.w.comparison.window)
        self.menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.menu.addSection(tiles[at].title or tiles[at].name)
        self.add_menu_entries(self.menu, tiles[at])
        self.menu.popup(pos)

    def key(self, key: str) -> None:
        """Key 1–4 in the main window: the tile under the mouse, else the last one
        clicked."""
        hovered = self.w.results.hovered_tile()
        if hovered is not None:
            self.key_on(*hovered, key)
        elif self.last_clicked is not None and self.last_clicked[0] == self.w.current:
            self.key_on(self.last_clicked[1], self.last_clicked[2], key)
        else:
            self.w.show_message("Point at a result (or click one) to set its relation with "
                                "the keys 1–4")

    def key_on(self, tiles: tuple[ResultTile, ...], at: int | None, key: str) -> None:
        """Set ``tiles[at]``'s relation to the query shown to the family's choice ``key``."""
        state = self.controller.state
        if at is None or self.w.current is None or self.w.evaluation is None or state is None:
            return
        tile, q = tiles[at], self.w.current
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
        hidden = (self.w.evaluation is not None and not self.w.results.show_ignored
                  and tile.index not in {t.index for t in self.w.results.tiles()})
        self.w.show_message(f"{self.controller.stack.undoText()} — Ctrl+Z undoes"
                            + (" · now ignored, so hidden: press I to show ignored items"
                               if hidden else ""))

    def relabel_dialog(self, offer: RelabelOffer) -> None:
        """Ask for the image's new label (showing how many queries it changes in the
        corrected ground truth) and relabel it for every query."""
        state = self.controller.state
        assert state is not None
        dialog = RelabelDialog(self.w, state.corrected, offer)
        if dialog.exec():
            self.controller.correct("", offer.item, dialog.new_label(), dialog.note())

    def jump(self, q: int) -> None:
        """Show query ``q`` (a row of the Corrections panel was clicked)."""
        if not self.w.queries.select_query(q):
            self.w.show_query(q)

    def choose_file_dialog(self) -> None:
        """File ▸ Corrections file…: where this dataset's corrections are kept."""
        if self.controller.state is None:
            self.w.show_message("Open a dataset first")
            return
        path, _ = QFileDialog.getSaveFileName(
            self.w, "Corrections file (an existing one is loaded)", str(self.controller.path),
            "Corrections (*.csv)", options=QFileDialog.Option.DontConfirmOverwrite)
        if path:
            self.controller.choose_file(Path(path))
            self._record_path()

    def _record_path(self) -> None:
        """Name the corrections file in use in the open request (the session keeps it)."""
        opened = self.controller.state.opened if self.controller.state is not None else None
        if opened is not None:
            opened.request = replace(opened.request, corrections=self.controller.path)

    def show_error(self, message: str) -> None:
        """Show a corrections problem in a dialog (non-blocking)."""
        self.last_error = message
        box = QMessageBox(QMessageBox.Icon.Warning, "irviewer — corrections", message,
                          parent=self.w)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()

    def install_menus(self, file_menu: QMenu, before: QMenu) -> QMenu:
        """Add File ▸ Corrections file…, the Edit menu (before ``before``) and return it."""
        choose = QAction("&Corrections file…", self.w)
        choose.triggered.connect(self.choose_file_dialog)
        file_menu.insertAction(file_menu.actions()[-1], choose)  # above Quit
        edit = QMenu("&Edit", self.w)
        self.w.menuBar().insertMenu(before.menuAction(), edit)
        undo = self.controller.stack.createUndoAction(self.w, "&Undo")
        undo.setShortcut(QKeySequence.StandardKey.Undo)
        redo = self.controller.stack.createRedoAction(self.w, "&Redo")
        redo.setShortcut(QKeySequence("Ctrl+Shift+Z"))
        author = QAction("Correction &author…", self.w)
        author.triggered.connect(self.controller.ask_author)
        for action in (undo, redo):
            edit.addAction(action)
        edit.addSeparator()
        edit.addAction(author)
        before.addAction(self.dock.toggleViewAction())
        return edit

    def _remember_click(self, tiles: tuple[ResultTile, ...], at: int) -> None:
        if self.w.current is not None:
            self.last_clicked = (self.w.current, tiles, at)

    def _same_dataset(self, opened: Opened) -> bool:
        state = self.controller.state
        return state is not None and state.opened.request.dataset == opened.request.dataset
