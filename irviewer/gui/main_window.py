"""The inspector window: the method bar on top, the query list on the left, the query and its
ranked results in the middle, the plots on the right. Thin: panels own their widgets and
paint view models (:mod:`irviewer.view`), controllers open data
(:mod:`irviewer.gui.opening.controller`) and keep sessions
(:mod:`irviewer.gui.opening.sessions`); the window wires their signals and holds what is shown."""

from __future__ import annotations

import contextlib
from pathlib import Path

from PySide6.QtCore import QByteArray, QPoint, QSettings, Qt
from PySide6.QtWidgets import (
    QMainWindow,
    QMenu,
    QMessageBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from irviewer.core.errors import InputError, window_text
from irviewer.core.evaluation import Evaluation
from irviewer.gui import menus
from irviewer.gui.compare.controller import CompareMode
from irviewer.gui.corrections.controller import CorrectionsUI
from irviewer.gui.curator.photo_search import PhotoSearch
from irviewer.gui.curator.presentation import Presentation
from irviewer.gui.export.dialog import FigureExporter
from irviewer.gui.opening.controller import OpeningController
from irviewer.gui.opening.sessions import Sessions
from irviewer.gui.plots.panel import PlotsPanel
from irviewer.gui.results.method_bar import MethodBar
from irviewer.gui.results.panel import DEPTH_RANGE, ResultsPanel
from irviewer.gui.results.query_list import QueryListPanel
from irviewer.gui.results.side_by_side import CompareController, query_side
from irviewer.gui.review.controller import ReviewUI
from irviewer.gui.widgets.thumbnails import ThumbnailCache
from irviewer.gui.widgets.tile_menu import TileMenuHook, tile_menu
from irviewer.opening.opener import Opened, OpenRequest
from irviewer.view.result_list import (
    ResultTile,
    ignored_reasons,
    own_badges,
    query_header,
    result_list,
)
from irviewer.view.summary import summary
from irviewer.view.view_state import ViewState

#: The smallest window in which the panels do not overlap (the query list, a row of tiles
#: and the plots stay usable).
MINIMUM_SIZE = (1140, 680)


class MainWindow(QMainWindow):
    """The irviewer inspector."""

    def __init__(self, top_k: int = 50, settings: QSettings | None = None,
                 keep_sessions: bool = True) -> None:
        super().__init__()
        self.setWindowTitle("irviewer")
        self.resize(1480, 900)
        self.setMinimumSize(*MINIMUM_SIZE)
        self.settings = settings if settings is not None else QSettings(
            QSettings.Format.IniFormat, QSettings.Scope.UserScope, "irviewer", "irviewer")
        self.opened: Opened | None = None
        self.evaluation: Evaluation | None = None
        self.current: int | None = None
        self.last_error: str | None = None
        self.cache = ThumbnailCache(size=200)

        self.bar = MethodBar()
        self.queries = QueryListPanel()
        depth = max(DEPTH_RANGE[0], min(DEPTH_RANGE[1], top_k))
        self.results = ResultsPanel(self.cache, depth)
        self.plots = PlotsPanel()
        self.split = QSplitter()
        for panel in (self.queries, self.results, self.plots):
            self.split.addWidget(panel)
        self.split.setSizes([430, 720, 330])
        self.split.setChildrenCollapsible(False)
        for panel, width in ((self.queries, 360), (self.results, 440), (self.plots, 280)):
            panel.setMinimumWidth(width)
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.addWidget(self.bar)
        layout.addWidget(self.split, 1)
        self.setCentralWidget(central)
        self.statusBar().showMessage("Ready")

        self.opening = OpeningController(self, self.statusBar())
        self.sessions = Sessions(self, self, self.settings, keep_sessions)
        self.comparison = CompareController(self)
        self.bar.changed.connect(self.rescore)
        self.queries.query_selected.connect(self.show_query)
        self.queries.query_hidden.connect(self.results.set_hidden)
        self.queries.ap_range_changed.connect(self.plots.set_active_range)
        self.plots.ap_range_requested.connect(self.set_ap_range)
        self.results.depth_changed.connect(self._refresh_query)
        self.results.show_ignored_changed.connect(self._refresh_query)
        self.results.tile_clicked.connect(self.comparison.show_tile)
        self.results.tile_menu_requested.connect(self._tile_menu)
        self.tile_menu_hooks: list[TileMenuHook] = []  # features add entries here
        self.corrections = CorrectionsUI(self)
        layout.insertWidget(1, self.corrections.line)
        self.opening.opened.connect(self.set_opened)
        self.opening.failed.connect(self.show_error)
        self.opening.message.connect(self.show_message)
        self.opening.session_dropped.connect(lambda path, sync: self.open_session(path, sync))
        self.compare_mode = CompareMode(self)  # "Compare with" (#12)
        self.review = ReviewUI(self)
        self.menus = menus.install(self)
        self.figures = FigureExporter(self)  # File ▸ Export figure…
        self.presentation = Presentation(self)  # F11, View ▸ Presentation (#13)
        self.photo_search = PhotoSearch(self, self.presentation)  # a visitor's photo (#13)

    # -- opening -------------------------------------------------------------------------
    def open_request(self, request: OpenRequest, sync: bool = False) -> None:
        """Read, rank and score ``request`` in the background (``sync`` for tests and
        screenshots); the window keeps showing what it showed until the result arrives."""
        self.last_error = None
        self.opening.open_request(self.corrections.take_request(request), sync=sync)

    def open_paths(self, dataset: Path, *methods: Path, sync: bool = False) -> None:
        """Open ``dataset`` with the descriptor files and rankings in ``methods``."""
        self.last_error = None
        self.opening.open_paths(dataset, *methods, sync=sync)

    def open_dropped(self, paths: list[Path], sync: bool = False) -> None:
        """Open dropped files (see :meth:`OpeningController.open_dropped`)."""
        self.last_error = None
        self.opening.open_dropped(paths, sync=sync)

    def open_session(self, path: Path, sync: bool = False) -> None:
        """Open the ``.irv`` session at ``path``: its data, then its view."""
        self.sessions.open_session(path, sync=sync)

    def save_session(self) -> bool:
        """File ▸ Save session; True when written."""
        return self.sessions.save()

    def save_session_as(self, path: Path | None = None) -> bool:
        """File ▸ Save session as ``path`` (asked for when None); True when written."""
        return self.sessions.save_as(path)

    def autosave(self) -> None:
        """Write the view to the autosave file if it changed."""
        self.sessions.autosave()

    def cancel_opening(self) -> None:
        """Stop opening; the window keeps what it showed before."""
        self.opening.cancel()

    def show_error(self, message: str) -> None:
        """Show a reader's sentence in a dialog (non-blocking)."""
        self.last_error = message
        self.sessions.failed()
        self.statusBar().showMessage("Could not open the dataset")
        box = QMessageBox(QMessageBox.Icon.Warning, "irviewer", message, parent=self)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()

    def show_message(self, message: str) -> None:
        """Show ``message`` in the status bar."""
        self.statusBar().showMessage(message)

    def set_opened(self, opened: Opened) -> None:
        """Show a freshly opened dataset: methods, protocols, query table, first query."""
        self.sessions.before_open()  # the view being left behind is kept first
        self.opened = self.opening.current = opened
        self.current = None
        ds = opened.dataset
        self.statusBar().showMessage(
            f"{ds.label()}: {ds.n_queries:,} queries, {ds.n_gallery:,} gallery images, "
            f"{', '.join(opened.methods)}"
            + (f" — {window_text(ds.notes[0])}" if ds.notes else ""))
        self.setWindowTitle(f"{ds.label()} — irviewer")
        self.bar.set_choices(list(opened.methods), list(opened.protocols))
        self.corrections.attach(opened)
        self.rescore()
        self.queries.jump(0)
        self.sessions.after_open()

    # -- what is shown ---------------------------------------------------------------------
    def rescore(self, changed=None) -> None:
        """Show the evaluation of the chosen method, protocol and conventions (``changed``:
        only those queries' rows changed, after a label correction)."""
        if self.opened is None or not self.bar.choice()[0]:
            return
        method, protocol, ap, self_match = self.bar.choice()
        self.bar.set_protocol_defaults(self.opened.evaluation(method, protocol).protocol)
        ev = self.opened.evaluation(method, protocol, ap=ap, self_match=self_match)
        self.evaluation = ev
        shown = self.opened.methods[method]  # rows matched by position: said, every time
        self.bar.set_banner(" ".join(window_text(n) for n in shown.notes)
                            if shown.matched_by_position else None)
        if changed is None:
            self.queries.set_evaluation(ev)
        else:
            self.queries.update_queries(ev, changed)
        self.plots.show_evaluation(ev, changed)
        self.bar.show_summary(summary(ev))
        self.corrections.show_evaluation(ev)
        self.results.set_legend(ignored_reasons(ev), own_badges(ev.protocol),
                                self.corrections.legend())
        self.compare_mode.rescore()
        self._refresh_query()

    def show_query(self, q: int) -> None:
        """Show query ``q``: image and box, ranked tiles, missed positives, its curves."""
        ev = self.evaluation
        assert ev is not None
        self.current = q
        result = result_list(ev, q, self.results.depth, self.results.show_ignored)
        header = query_header(ev, q)
        self.results.show_result(header, result)
        self.results.set_marked(self.corrections.marked(q))
        self.plots.show_query(ev, q)
        self.comparison.set_query(query_side(header), result.tiles, result.missed)
        self.compare_mode.show_query(q)

    def tile_menu(self, tiles: tuple[ResultTile, ...], at: int) -> QMenu:
        """Return the context menu of ``tiles[at]`` (with every hook's entries)."""
        return tile_menu(self, tiles, at, self.comparison.show_tile, self.tile_menu_hooks)

    def _tile_menu(self, tiles: tuple[ResultTile, ...], at: int, pos: QPoint) -> None:
        menu = self.tile_menu(tiles, at)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        menu.popup(pos)

    def _refresh_query(self, *_args: object) -> None:
        if self.current is not None and self.evaluation is not None:
            self.show_query(self.current)

    def select_query(self, name: str) -> None:
        """Select the query called ``name`` (``--select``); InputError when none is."""
        assert self.opened is not None
        q = self.opened.dataset.query_by_name(name)
        if not self.queries.select_query(q):
            self.show_query(q)

    def set_ap_range(self, ap_range: tuple[float, float] | None) -> None:
        """Show only queries with AP in ``ap_range`` (fractions; None for all)."""
        self.queries.set_ap_range(ap_range)

    def next_failure(self) -> None:
        """Select the next query (in table order) whose first result is wrong."""
        if not self.queries.next_failure():
            self.statusBar().showMessage("No failure among the queries shown")

    def visible_thumbnails(self) -> list[tuple[str, Path | None]]:
        """Return the (name, path) of every tile shown (for --screenshot)."""
        return [(t.name, t.path) for t in self.results.tiles()]

    # -- the view as a value -------------------------------------------------------------
    def view_state(self) -> ViewState:
        """Return what the window shows, as a :class:`ViewState`."""
        method, protocol, ap, self_match = self.bar.choice()
        text, failures, ap_range = self.queries.filters()
        sort = self.queries.sort_state()
        selected = (self.opened.dataset.queries[self.current].name
                    if self.opened is not None and self.current is not None else None)
        return ViewState(
            method=method or None, protocol=protocol or None, ap=ap, self_match=self_match,
            selected_query=selected, filter_text=text, failures_only=failures,
            ap_range=ap_range, top_k=self.results.depth, tile_size=self.results.tile_size,
            show_ignored=self.results.show_ignored,
            sort_column=sort[0] if sort else None,
            sort_order=sort[1] if sort else "ascending",
            splitter_sizes=tuple(self.split.sizes()))

    def apply_view(self, state: ViewState) -> None:
        """Show ``state`` (the data is open). Values that no longer apply (a protocol the
        dataset lacks, a query that is gone) are left as they are."""
        self.bar.set_choice(state.method, state.protocol, state.ap, state.self_match)
        self.results.set_view(state.top_k, state.tile_size, state.show_ignored)
        self.queries.set_filters(state.filter_text, state.failures_only, state.ap_range)
        if state.sort_column is not None:
            self.queries.sort_by(state.sort_column, state.sort_order)
        if state.splitter_sizes:
            self.split.setSizes(list(state.splitter_sizes))
        if state.selected_query and self.opened is not None:
            with contextlib.suppress(InputError):  # the query is gone: keep the one shown
                self.select_query(state.selected_query)

    def geometry_state(self) -> str:
        """Return the window's geometry as base64 text (for the session)."""
        return bytes(self.saveGeometry().toBase64()).decode("ascii")

    def restore_geometry_state(self, state: str) -> None:
        """Restore a geometry from :meth:`geometry_state`."""
        self.restoreGeometry(QByteArray.fromBase64(state.encode("ascii")))

    def dragEnterEvent(self, event) -> None:  # noqa: N802
        self.opening.drag_enter(event)

    def dropEvent(self, event) -> None:  # noqa: N802
        if not self.photo_search.drop(event):  # an image is a photo to search
            self.opening.drop(event)

    def closeEvent(self, event) -> None:  # noqa: N802
        if not self.sessions.close():
            event.ignore()
            return
        self.opening.wait()
        self.review.auditor.wait()
        self.corrections.controller.wait_saved()
        self.compare_mode.wait()
        self.figures.wait()
        self.cache.close()  # late thumbnails must not reach widgets being destroyed
        for child in self.findChildren(QWidget):
            if child.isWindow() and child.isVisible():  # the comparison, message boxes
                child.close()
        super().closeEvent(event)
