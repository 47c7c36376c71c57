"""The inspector window: the method bar on top, the query list on the left, the query and its
ranked results in the middle, the plots on the right, docks below. Thin: it builds each
feature's controller (each a subpackage of :mod:`irviewer.gui` whose package names it),
places their widgets, and wires their signals; what is shown is the results feature's
:class:`~irviewer.gui.results.Inspector`, and the features talk to it and to each other
through methods and signals, never through this window's layout."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings, Qt
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QDockWidget, QMainWindow, QSplitter, QVBoxLayout, QWidget

from irviewer.core.errors import window_text
from irviewer.core.evaluation import Evaluation
from irviewer.gui import menus
from irviewer.gui.ann import AnnUI
from irviewer.gui.collections import Collections
from irviewer.gui.compare import CompareMode
from irviewer.gui.corrections import CorrectionsUI
from irviewer.gui.export import FigureExporter
from irviewer.gui.opening import OpeningController
from irviewer.gui.photo_search import PhotoSearch
from irviewer.gui.plots import PlotsPanel
from irviewer.gui.presentation import Presentation
from irviewer.gui.rerank import RerankUI
from irviewer.gui.results import Inspector
from irviewer.gui.review import ReviewUI
from irviewer.gui.scores import ScoresUI
from irviewer.gui.sessions import Sessions
from irviewer.gui.widgets.status_bar import ElidedStatusBar
from irviewer.gui.widgets.thumbnails import ThumbnailCache
from irviewer.gui.widgets.warning import warn
from irviewer.opening.opener import Opened
from irviewer.opening.request import RESULTS_SHOWN, OpenRequest
from irviewer.view.view_state import ViewState
from irviewer.view.window_layout import opened_line, window_layout

#: The smallest window in which the panels do not overlap (the query list, a row of tiles
#: and the plots stay usable).
MINIMUM_SIZE = (1140, 680)
PLOTS_WIDTH = 280


class MainWindow(QMainWindow):
    """The irviewer inspector."""

    def __init__(self, top_k: int = RESULTS_SHOWN, settings: QSettings | None = None,
                 keep_sessions: bool = True) -> None:
        super().__init__()
        self.setWindowTitle("irviewer")
        self.resize(1480, 900)
        self.setMinimumSize(*MINIMUM_SIZE)
        self.settings = settings if settings is not None else QSettings(
            QSettings.Format.IniFormat, QSettings.Scope.UserScope, "irviewer", "irviewer")
        self.last_error: str | None = None
        self._left_out: list[QWidget] = []  # panes a curator's window leaves out
        self.cache = ThumbnailCache(size=200)
        self.inspector = Inspector(self, self.cache, top_k)
        # the inspector's panels, for the tests and the screenshot's checks
        self.bar, self.queries = self.inspector.bar, self.inspector.queries
        self.results, self.comparison = self.inspector.results, self.inspector.comparison
        self.plots = PlotsPanel()
        self.plots.setMinimumWidth(PLOTS_WIDTH)
        self.split = QSplitter()
        for pane in (self.queries, self.inspector.middle, self.plots):
            self.split.addWidget(pane)
        self.split.setSizes([430, 720, 330])
        self.split.setChildrenCollapsible(False)
        self.setStatusBar(ElidedStatusBar(self))  # long messages elided, whole on hover
        self.opening = OpeningController(self, self.statusBar())
        self.sessions = Sessions(self, self, self.settings, keep_sessions)
        self.menus = menus.install(self, self)
        self.corrections = CorrectionsUI(self, self.settings, self.inspector, self.menus)
        self.opening.prepare = self.corrections.take_request
        self.review = ReviewUI(self, self.inspector, self.corrections.controller, self.menus,
                               self)
        self.compare_mode = CompareMode(self, self.inspector, self.plots, self.cache)
        self.scores = ScoresUI(self, self.inspector, self.plots)
        self.rerank = RerankUI(self, self.inspector, self.opening, self.compare_mode,
                               self.menus)
        self.ann = AnnUI(self, self.inspector, self.opening, self.compare_mode, self.menus)
        self.figures = FigureExporter(self, self.inspector, self.compare_mode, self.menus)
        self.presentation = Presentation(self, self.settings, self.inspector, self.menus)
        self.photo_search = PhotoSearch(self, self.inspector, self.presentation, self.menus)
        self.collections = Collections(self, self, self.menus)
        self._place()
        self._wire()
        self.statusBar().showMessage("Ready")

    def _place(self) -> None:
        central = QWidget()
        layout = QVBoxLayout(central)
        for widget in (self.bar, self.corrections.line, self.photo_search.bar):
            layout.addWidget(widget)
        layout.addWidget(self.split, 1)
        self.setCentralWidget(central)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.corrections.dock)
        self.resizeDocks([self.corrections.dock], [150], Qt.Orientation.Vertical)
        self.splitDockWidget(self.corrections.dock, self.review.dock,
                             Qt.Orientation.Horizontal)

    def _wire(self) -> None:
        shown, plots = self.inspector, self.plots
        shown.evaluation_shown.connect(plots.show_evaluation)
        shown.evaluation_shown.connect(lambda ev, _changed: self._show_layout(ev))
        shown.evaluation_shown.connect(lambda *_: self.compare_mode.rescore())
        shown.query_shown.connect(self._plot_query)
        shown.query_shown.connect(self.compare_mode.show_query)
        shown.evaluation_shown.connect(self.scores.evaluation_shown)
        shown.query_shown.connect(self.scores.query_shown)
        shown.query_shown.connect(self.photo_search.photo_left)
        shown.methods_changed.connect(self.compare_mode.methods_changed)
        shown.ap_range_changed.connect(plots.set_active_range)
        plots.ap_range_requested.connect(shown.set_ap_range)
        self.opening.opened.connect(self.set_opened)
        self.opening.opened.connect(self.collections.data_opened)
        self.opening.failed.connect(self.show_error)
        self.opening.message.connect(self.show_message)
        self.opening.session_dropped.connect(lambda path, sync: self.open_session(path, sync))
        for feature in (self.corrections, self.review, self.figures, self.presentation,
                        self.photo_search, self.rerank, self.ann):
            feature.message.connect(self.show_message)
        self.presentation.query_shown.connect(self.photo_search.photo_left)
        self.presentation.photo_requested.connect(self.photo_search.choose)
        self.presentation.photo_dropped.connect(self.photo_search.search)
        self.photo_search.photo_shown.connect(lambda on: plots.setEnabled(not on))
        self.corrections.unsaved_changed.connect(self.setWindowModified)

    # -- what is shown (the inspector's) -------------------------------------------------
    @property
    def opened(self) -> Opened | None:
        """Return the open data (None before any)."""
        return self.inspector.opened

    @property
    def evaluation(self) -> Evaluation | None:
        """Return the evaluation shown."""
        return self.inspector.evaluation

    @property
    def current(self) -> int | None:
        """Return the position of the query shown (None: none, or a visitor's photo)."""
        return self.inspector.current

    def show_query(self, q: int) -> None:
        """Show query ``q`` (painted again even when it is the one selected)."""
        self.inspector.show_query(q)

    def select_query(self, name: str) -> None:
        """Select the query called ``name`` (``--select``); InputError when none is."""
        self.inspector.select_query(name)

    def set_ap_range(self, ap_range: tuple[float, float] | None) -> None:
        """Show only queries with AP in ``ap_range`` (fractions; None for all)."""
        self.inspector.set_ap_range(ap_range)

    def next_failure(self) -> None:
        """Select the next query (in table order) whose first result is wrong."""
        if not self.inspector.next_failure():
            self.statusBar().showMessage("No failure among the queries shown")

    # -- opening -------------------------------------------------------------------------
    def open_request(self, request: OpenRequest, sync: bool = False) -> None:
        """Read, rank and score ``request`` in the background (``sync`` for tests and
        screenshots); the window keeps showing what it showed until the result arrives."""
        self.last_error = None
        self.opening.open_request(request, sync=sync)

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

    def set_opened(self, opened: Opened) -> None:
        """Show freshly opened data: methods, protocols, query table, the first query."""
        self.sessions.before_open()  # the view being left behind is kept first
        self.opening.current = opened
        self.inspector.take(opened)
        ds = opened.dataset
        self.statusBar().showMessage(
            opened_line(ds, list(opened.methods))
            + (f" — {window_text(ds.notes[0])}" if ds.notes else ""))
        self.setWindowTitle(f"{ds.label()}[*] — irviewer")  # [*]: corrections not saved yet
        self.corrections.attach(opened)
        self.inspector.rescore()
        self.inspector.first_query()
        self.sessions.after_open()
        self.review.dataset_opened(opened)
        self.compare_mode.data_opened()
        self.presentation.data_shown()
        if opened.not_reopened:  # a session's method that could not be made again
            self.tell("\n\n".join(opened.not_reopened))

    def tell(self, message: str) -> None:
        """Show ``message`` in a dialog that does not block (the data stays open); while
        the kiosk runs, in the hidden inspector's status line only (it is for staff, and
        the kiosk is the only window visitors see)."""
        self.last_error = message
        if self.presentation.kiosk_active:
            self.statusBar().showMessage(window_text(message))
            return
        warn(self, message)

    def show_error(self, message: str) -> None:
        """Show a reader's sentence in a dialog (non-blocking)."""
        self.sessions.failed()
        self.statusBar().showMessage("Could not open the dataset")
        self.tell(message)

    def show_message(self, message: str) -> None:
        """Show ``message`` in the status bar."""
        self.statusBar().showMessage(message)

    # -- the view as a value (the sessions') -------------------------------------------------
    def view_state(self) -> ViewState:
        """Return what the window shows, as a :class:`ViewState`."""
        return replace(self.inspector.view_state(tuple(self.split.sizes())),
                       compare_with=self.compare_mode.compared())

    def apply_view(self, state: ViewState) -> None:
        """Show ``state`` (the data is open); values that no longer apply are left."""
        if state.splitter_sizes:
            self.split.setSizes(list(state.splitter_sizes))
        self.inspector.apply_view(state)
        if state.compare_with is not None:  # else compare mode stays as the opening set it
            self.compare_mode.set_compared(state.compare_with)

    def _show_layout(self, evaluation: Evaluation) -> None:
        """Show the research tool's panes (the plots, the label corrections) or leave them
        out of a curator's window (:mod:`irviewer.view.window_layout`); a pane the user
        had closed stays closed."""
        research = window_layout(evaluation).research
        panes: tuple[QWidget, ...] = (self.plots, self.corrections.line,
                                      self.corrections.dock)
        if not research:
            self._left_out += [p for p in panes if not p.isHidden() and p not in self._left_out]
            for pane in panes:
                pane.setVisible(False)
        else:
            for left in self._left_out:
                left.setVisible(True)
            self._left_out = []

    def _plot_query(self, q: int) -> None:
        if self.inspector.evaluation is not None:  # a query is shown under an evaluation
            self.plots.show_query(self.inspector.evaluation, q)

    def geometry_state(self) -> str:
        """Return the window's geometry as base64 text (for the session)."""
        return bytes(self.saveGeometry().toBase64().data()).decode("ascii")

    def restore_geometry_state(self, state: str) -> None:
        """Restore a geometry from :meth:`geometry_state`."""
        self.restoreGeometry(QByteArray.fromBase64(state.encode("ascii")))

    def make_room(self, dock: QDockWidget) -> None:
        """Give a dock that opens most of the width under the results, and height (the
        review queue beside the corrections)."""
        self.resizeDocks([dock], [330], Qt.Orientation.Vertical)
        self.resizeDocks([self.corrections.dock, dock], [380, 1100], Qt.Orientation.Horizontal)

    # -- Qt events ---------------------------------------------------------------------------
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802
        self.opening.drag_enter(event)

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802
        if not self.photo_search.drop(event):  # an image is a photo to search
            self.opening.drop(event)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        if not self.corrections.close() or not self.sessions.close():
            event.ignore()
            return
        self.opening.wait()
        self.review.wait()
        self.corrections.stop_watching()
        self.compare_mode.wait()
        self.scores.wait()
        self.figures.wait()
        self.ann.wait()
        self.photo_search.wait()
        self.collections.indexer.wait()  # a cancelled indexing writes nothing
        self.cache.close()  # late thumbnails must not reach widgets being destroyed
        for child in self.findChildren(QWidget):
            if child.isWindow() and child.isVisible():  # the comparison, message boxes
                child.close()
        super().closeEvent(event)
