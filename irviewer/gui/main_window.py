"""The inspector window: query table on the left, the query and its ranked results in the
middle (relevance by frame colour and badge), missed positives below, the plots on the
right, the method, protocol and headline numbers on top. Thin: the core computes, this
window asks and shows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image
from PySide6.QtCore import QItemSelectionModel, QModelIndex, QRectF, QSettings, Qt, QTimer
from PySide6.QtGui import (
    QAction,
    QColor,
    QImage,
    QKeySequence,
    QPainter,
    QPen,
    QPixmap,
    QShortcut,
)
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from irviewer.core.curves import ap_histogram, cmc_curve, mean_precision_at, query_precision_at
from irviewer.core.errors import InputError
from irviewer.core.evaluation import IGNORED, Evaluation
from irviewer.gui import persistence
from irviewer.gui.compare import CompareWindow, Side
from irviewer.gui.models import QueryFilter, QueryTableModel
from irviewer.gui.open_dialog import OpenDialog
from irviewer.gui.overview import Overview
from irviewer.gui.plots import PRPlot
from irviewer.gui.theme import QUERY_BOX, RELEVANCE, SAME_CAMERA, legend_html
from irviewer.gui.thumbnails import ThumbnailCache, decode
from irviewer.gui.tiles import Tile, TileGrid
from irviewer.gui.workers import Opener
from irviewer.session import Opened, OpenRequest, classify_paths, demo_request
from irviewer.session_file import (
    SESSION_SUFFIX,
    SessionFile,
    autosave_path,
    load_session,
    open_request,
    save_session,
)

AUTOSAVE_MS = 5000
CURVE_DEPTH = 50  # the P@k and CMC curves run from 1 to this k

AP_CHOICES = (("", None), ("finite-sum AP", "finite"), ("trapezoid AP", "trapezoid"))
SELF_CHOICES = (("", None), ("own image removed", "remove"), ("own image kept", "keep"))
AP_NAMES = {"finite": "finite-sum AP", "trapezoid": "trapezoid AP"}
SELF_NAMES = {"remove": "own image removed", "keep": "own image kept"}
TOP_K_RANGE = (10, 200)


class MainWindow(QMainWindow):
    """The irviewer inspector."""

    def __init__(self, top_k: int = 50, settings: QSettings | None = None,
                 keep_sessions: bool = True) -> None:
        super().__init__()
        self.setWindowTitle("irviewer")
        self.resize(1480, 900)
        self.setAcceptDrops(True)
        self.settings = settings if settings is not None else QSettings(
            QSettings.Format.IniFormat, QSettings.Scope.UserScope, "irviewer", "irviewer")
        self.top_k = max(TOP_K_RANGE[0], min(TOP_K_RANGE[1], top_k))
        self.opened: Opened | None = None
        self.evaluation: Evaluation | None = None
        self.current: int | None = None
        self.show_ignored = False
        self.last_error: str | None = None
        self.cache = ThumbnailCache(size=200)
        self.compare: CompareWindow | None = None
        self._compare_at: int | None = None
        self.keep_sessions = keep_sessions  # False: no autosave, no recent files (screenshots)
        self.session_path: Path | None = None  # the user's own .irv, once saved or opened
        self._opening_session: tuple[Path | None, SessionFile] | None = None
        self._autosaved: str | None = None
        self.autosave_timer = QTimer(self)
        self.autosave_timer.setInterval(AUTOSAVE_MS)
        self.autosave_timer.timeout.connect(self.autosave)
        self.ask_restore = self._ask_restore
        self.opener = Opener()
        self.opener.progress.connect(self._on_progress)
        self.opener.opened.connect(self.set_opened)
        self.opener.failed.connect(self.show_error)
        self.opener.busy.connect(self._on_busy)
        self._build()
        self._menus()
        self._shortcuts()

    # -- layout ------------------------------------------------------------------------
    def _build(self) -> None:
        self.method_box = QComboBox()
        self.method_box.setToolTip("The descriptor file or ranking whose results are shown")
        self.method_box.currentTextChanged.connect(self._rescore)
        self.protocol_box = QComboBox()
        self.protocol_box.currentTextChanged.connect(self._rescore)
        self.ap_box = QComboBox()
        self.self_box = QComboBox()
        for box, choices in ((self.ap_box, AP_CHOICES), (self.self_box, SELF_CHOICES)):
            for text, value in choices:
                box.addItem(text, value)
            box.currentIndexChanged.connect(self._rescore)
        self.ap_box.setToolTip("AP convention: finite-sum (trec_eval, re-id) or trapezoid "
                               "(Oxford/Paris and revisited compute_ap)")
        top = QHBoxLayout()
        for label, widget in (("Method:", self.method_box), ("Protocol:", self.protocol_box),
                              ("", self.ap_box), ("", self.self_box)):
            if label:
                top.addWidget(QLabel(label))
            top.addWidget(widget)
        top.addStretch(1)
        self.summary = QLabel("Open a dataset (Ctrl+O) or drop its files here")
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.model = QueryTableModel()
        self.proxy = QueryFilter()
        self.proxy.setSourceModel(self.model)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        for column, width in enumerate((178, 46, 46, 42)):
            self.table.horizontalHeader().resizeSection(column, width)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.table.selectionModel().currentRowChanged.connect(self._on_row)
        self.filter_edit = QLineEdit()
        self.filter_edit.setPlaceholderText("Filter queries…  (Ctrl+F)")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.textChanged.connect(self._on_filter)
        self.failures = QCheckBox("Failures only (P@1 = 0)")
        self.failures.toggled.connect(self._on_failures)
        self.ap_low, self.ap_high = QDoubleSpinBox(), QDoubleSpinBox()
        for spin, value in ((self.ap_low, 0.0), (self.ap_high, 100.0)):
            spin.setRange(0.0, 100.0)
            spin.setDecimals(0)
            spin.setSingleStep(10.0)
            spin.setSuffix(" %")
            spin.setValue(value)
            spin.valueChanged.connect(self._on_ap_spin)
        ap_row = QHBoxLayout()
        ap_row.addWidget(QLabel("AP from"))
        ap_row.addWidget(self.ap_low)
        ap_row.addWidget(QLabel("to"))
        ap_row.addWidget(self.ap_high)
        ap_row.addStretch(1)
        self.count = QLabel("")
        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.addWidget(self.filter_edit)
        lv.addWidget(self.failures)
        lv.addLayout(ap_row)
        lv.addWidget(self.table, 1)
        lv.addWidget(self.count)

        self.query_image = QLabel()
        self.query_image.setFixedSize(260, 260)
        self.query_image.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.query_title = QLabel("")
        self.query_title.setWordWrap(True)
        self.query_metrics = QLabel("")
        self.query_metrics.setTextFormat(Qt.TextFormat.RichText)
        self.k_box = QSpinBox()
        self.k_box.setRange(*TOP_K_RANGE)
        self.k_box.setSingleStep(10)
        self.k_box.setValue(self.top_k)
        self.k_box.setToolTip("How many ranked results to show (10–200)")
        self.k_box.valueChanged.connect(self._on_k)
        k_row = QHBoxLayout()
        k_row.addWidget(QLabel("Show the top"))
        k_row.addWidget(self.k_box)
        k_row.addWidget(QLabel("results"))
        k_row.addStretch(1)
        self.ignored_box = QCheckBox("Show ignored items where they ranked (I)")
        self.ignored_box.toggled.connect(self._on_ignored)
        info = QVBoxLayout()
        info.addWidget(self.query_title)
        info.addWidget(self.query_metrics)
        info.addLayout(k_row)
        info.addWidget(self.ignored_box)
        self.legend = QLabel(legend_html())
        info.addWidget(self.legend)
        info.addWidget(QLabel('<span style="color:#555">Click a result to compare it with '
                              "the query</span>"))
        info.addStretch(1)
        head = QHBoxLayout()
        head.addWidget(self.query_image)
        head.addLayout(info, 1)

        self.grid = TileGrid(self.cache)
        self.grid.clicked.connect(self._on_tile)
        self.missed_label = QLabel("")
        self.missed = TileGrid(self.cache, tile_size=96)
        self.missed.clicked.connect(self._on_missed_tile)
        results = QWidget()
        rv = QVBoxLayout(results)
        self.results_label = QLabel("<b>Ranked results</b>")
        rv.addWidget(self.results_label)
        rv.addWidget(self.grid)
        rv.addWidget(self.missed_label)
        rv.addWidget(self.missed)
        rv.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(results)
        middle = QWidget()
        mv = QVBoxLayout(middle)
        mv.setContentsMargins(0, 0, 0, 0)
        mv.addLayout(head)
        mv.addWidget(scroll, 1)

        self.plot = PRPlot()
        self.plot.setMinimumWidth(320)
        self.overview = Overview()
        self.overview.histogram.range_clicked.connect(lambda lo, hi: self.set_ap_range((lo, hi)))
        self.overview.histogram.range_cleared.connect(lambda: self.set_ap_range(None))
        self.right = QSplitter(Qt.Orientation.Vertical)
        self.right.addWidget(self.plot)
        self.right.addWidget(self.overview)
        self.right.setSizes([440, 360])

        self.split = QSplitter()
        self.split.addWidget(left)
        self.split.addWidget(middle)
        self.split.addWidget(self.right)
        self.split.setSizes([360, 790, 330])
        central = QWidget()
        cv = QVBoxLayout(central)
        cv.addLayout(top)
        cv.addWidget(self.summary)
        cv.addWidget(self.split, 1)
        self.setCentralWidget(central)

        self.progress = QProgressBar()
        self.progress.setMaximumWidth(220)
        self.progress.setTextVisible(False)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel_opening)
        for widget in (self.progress, self.cancel_button):
            widget.setVisible(False)
            self.statusBar().addPermanentWidget(widget)
        self.statusBar().showMessage("Ready")

    def _menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        self.recent_menu = None
        for text, keys, slot in (
                ("&Open…", QKeySequence.StandardKey.Open, self.open_dialog),
                ("&Add a descriptor file or ranking…", "Ctrl+Shift+O", self.add_methods_dialog),
                ("Open the &demo", None, lambda: self.open_request(demo_request())),
                ("Open a &session…", None, self.open_session_dialog),
                ("&Save session", QKeySequence.StandardKey.Save, self.save_session),
                ("Save session &as…", "Ctrl+Shift+S", self.save_session_as)):
            action = QAction(text, self)
            if keys is not None:
                action.setShortcut(QKeySequence(keys))
            action.triggered.connect(slot)
            file_menu.addAction(action)
        self.recent_menu = file_menu.addMenu("&Recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        file_menu.addSeparator()
        quit_action = QAction("&Quit", self)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.close)
        file_menu.addAction(quit_action)
        view = bar.addMenu("&View")
        for text, keys, slot in (("Next &failure", "F", self.next_failure),
                                 ("&Larger thumbnails", "+", lambda: self._zoom(16)),
                                 ("&Smaller thumbnails", "-", lambda: self._zoom(-16)),
                                 ("Show &ignored items", "I", self.ignored_box.toggle)):
            action = QAction(text, self)
            action.setShortcut(QKeySequence(keys))
            action.triggered.connect(slot)
            view.addAction(action)
        help_menu = bar.addMenu("&Help")
        keys_action = QAction("&Keyboard shortcuts", self)
        keys_action.triggered.connect(self._show_keys)
        help_menu.addAction(keys_action)

    def _shortcuts(self) -> None:
        for keys, slot in ((QKeySequence.StandardKey.Find, self._focus_filter),
                           ("=", lambda: self._zoom(16)),
                           ("Home", lambda: self._jump(0)), ("End", lambda: self._jump(-1)),
                           ("Escape", self.cancel_opening)):
            QShortcut(QKeySequence(keys), self, activated=slot)

    def _show_keys(self) -> None:
        QMessageBox.information(
            self, "Keyboard shortcuts",
            "↑ / ↓  previous / next query\nF  next failure (P@1 = 0)\nHome / End  first / "
            "last query\n+ / −  larger / smaller thumbnails\nI  show ignored items\n"
            "Ctrl+O  open\nCtrl+Shift+O  add a descriptor file or ranking\nCtrl+F  filter "
            "queries\nEsc  cancel opening\nIn the comparison: ← / →  previous / next result, "
            "Ctrl+0  fit")

    # -- opening -------------------------------------------------------------------------
    def open_request(self, request: OpenRequest, sync: bool = False) -> None:
        """Read, rank and score ``request`` in the background (``sync`` for tests and
        screenshots); the window keeps showing what it showed until the result arrives."""
        self.last_error = None
        self.statusBar().showMessage(f"Opening {Path(request.dataset).name}…")
        self.opener.open(request, sync=sync)

    def open_paths(self, dataset: Path, *methods: Path, sync: bool = False) -> None:
        """Open ``dataset`` with the descriptor files and rankings in ``methods``."""
        roles = classify_paths(methods)
        self.open_request(OpenRequest(Path(dataset), (*roles.descriptors, *roles.datasets),
                                      roles.rankings), sync=sync)

    def open_dialog(self) -> None:
        """File ▸ Open: the dataset, its methods and the reader options in one dialog."""
        dialog = OpenDialog(self, self.opened.request if self.opened else None)
        if dialog.exec():
            request = dialog.request()
            if request is not None:
                self.open_request(request)

    def add_methods_dialog(self) -> None:
        """File ▸ Add: open more descriptor files or rankings for the open dataset."""
        if self.opened is None:
            self.open_dialog()
            return
        paths, _ = QFileDialog.getOpenFileNames(self, "Descriptor files or rankings")
        if paths:
            self.add_methods([Path(p) for p in paths])

    def add_methods(self, paths: list[Path], sync: bool = False) -> None:
        """Reopen the current dataset with ``paths`` added as methods."""
        assert self.opened is not None
        old = self.opened.request
        roles = classify_paths(paths)
        known = set(old.sources())
        request = OpenRequest(
            old.dataset,
            (*old.descriptors, *(p for p in (*roles.descriptors, *roles.datasets)
                                 if p not in known)),
            (*old.rankings, *(p for p in roles.rankings if p not in known)),
            old.format, old.options, old.k)
        self.open_request(request, sync=sync)

    def cancel_opening(self) -> None:
        """Stop opening; the window keeps what it showed before."""
        if self.opener.running:
            self.opener.cancel()
            self.statusBar().showMessage("Opening cancelled")

    def show_error(self, message: str) -> None:
        """Show a reader's sentence in a dialog (non-blocking)."""
        self.last_error = message
        self._opening_session = None
        self.statusBar().showMessage("Could not open the dataset")
        box = QMessageBox(QMessageBox.Icon.Warning, "irviewer", message, parent=self)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()

    # -- sessions ----------------------------------------------------------------------------
    def open_session(self, path: Path, sync: bool = False) -> None:
        """Open the ``.irv`` session at ``path``: its data, then its view. A newer autosave
        beside it (the window was not closed normally) is offered first."""
        path = Path(path)
        try:
            session = load_session(path)
            backup = autosave_path(path)
            if (backup.is_file() and backup.stat().st_mtime > path.stat().st_mtime
                    and self.ask_restore(backup)):
                session = load_session(backup)
        except InputError as e:
            self.show_error(str(e))
            return
        self._opening_session = (path, session)
        self.open_request(open_request(session), sync=sync)

    def open_session_dialog(self) -> None:
        """File ▸ Open a session."""
        path, _ = QFileDialog.getOpenFileName(self, "Open a session",
                                              filter=f"irviewer sessions (*{SESSION_SUFFIX})")
        if path:
            self.open_session(Path(path))

    def save_session(self) -> bool:
        """File ▸ Save session: write the view to the session file (asks for one the first
        time); return True when written."""
        if self.session_path is None:
            return self.save_session_as()
        return self._write_session(self.session_path)

    def save_session_as(self, path: Path | None = None) -> bool:
        """File ▸ Save session as: write the view to ``path`` (asked for when None)."""
        if self.opened is None:
            self.statusBar().showMessage("Nothing to save: open a dataset first")
            return False
        if path is None:
            chosen, _ = QFileDialog.getSaveFileName(
                self, "Save the session", filter=f"irviewer sessions (*{SESSION_SUFFIX})")
            if not chosen:
                return False
            path = Path(chosen)
        if path.suffix != SESSION_SUFFIX:
            path = path.with_name(path.name + SESSION_SUFFIX)
        if self._write_session(path):
            self.session_path = path
            return True
        return False

    def _write_session(self, path: Path) -> bool:
        state = persistence.view_state(self)
        if state is None:
            return False
        try:
            save_session(path, state)
        except (InputError, OSError) as e:
            self.show_error(f"{path}: the session was not saved ({e})")
            return False
        autosave_path(path).unlink(missing_ok=True)
        persistence.remember(self.settings, path)
        self.statusBar().showMessage(f"Session saved to {path}")
        return True

    def autosave(self) -> None:
        """Write the view to the autosave file if it changed since the last write."""
        if not self.keep_sessions:
            return
        state = persistence.view_state(self)
        target = persistence.autosave_target(self)
        if state is None or target is None:
            return
        fingerprint = repr(state)
        if fingerprint == self._autosaved:
            return
        try:
            save_session(target, state)
        except (InputError, OSError) as e:
            self.statusBar().showMessage(f"Autosave failed: {e}")
            return
        self._autosaved = fingerprint
        if self.session_path is None:
            persistence.remember(self.settings, target)

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        recent = persistence.recent_sessions(self.settings)
        if not recent:
            self.recent_menu.addAction("(nothing yet)").setEnabled(False)
        for path in recent:
            action = self.recent_menu.addAction(persistence.label(path))
            action.triggered.connect(lambda _=False, p=path: self._open_recent(Path(p)))

    def _open_recent(self, path: Path) -> None:
        """Open a recent session: the user's own file as such, a kept one as its data."""
        if path.parent == persistence.data_folder():
            try:
                session = load_session(path)
            except InputError as e:
                self.show_error(str(e))
                return
            self._opening_session = (None, session)
            self.open_request(open_request(session))
        else:
            self.open_session(path)

    def _ask_restore(self, backup: Path) -> bool:
        answer = QMessageBox.question(
            self, "irviewer", f"{backup.name} is newer than the session: irviewer was not "
            "closed normally last time. Restore the autosaved view?")
        return answer == QMessageBox.StandardButton.Yes

    def _on_busy(self, busy: bool) -> None:
        self.progress.setVisible(busy)
        self.cancel_button.setVisible(busy)
        self.progress.setRange(0, 0)

    def _on_progress(self, stage: str, done: int, total: int) -> None:
        if total:
            self.progress.setRange(0, total)
            self.progress.setValue(done)
        else:
            self.progress.setRange(0, 0)  # busy indicator
        suffix = f" {done:,}/{total:,}" if total else ""
        self.statusBar().showMessage(f"{stage[:1].upper()}{stage[1:]}{suffix}…")

    def set_opened(self, opened: Opened) -> None:
        """Show a freshly opened dataset: methods, protocols, query table, first query."""
        self.autosave()  # the view being left behind is kept first
        self.opened = opened
        self.current = None
        ds = opened.dataset
        names = ", ".join(opened.methods)
        self.statusBar().showMessage(
            f"{ds.label()}: {ds.n_queries:,} queries, {ds.n_gallery:,} gallery images, "
            f"{names}" + (f" — {ds.notes[0]}" if ds.notes else ""))
        self.setWindowTitle(f"{ds.label()} — irviewer")
        for box, items in ((self.method_box, list(opened.methods)),
                           (self.protocol_box, list(ds.protocols))):
            box.blockSignals(True)
            box.clear()
            box.addItems(items)
            box.blockSignals(False)
        self.method_box.setEnabled(len(opened.methods) > 1)
        session, self._opening_session = self._opening_session, None
        self.session_path = session[0] if session is not None else None
        self._autosaved = None
        self.legend.setText(legend_html(same_camera="same_camera" in ds.groups))
        self._rescore()
        self._jump(0)
        if session is not None:
            persistence.apply_view(self, session[1])
        if self.session_path is not None and self.keep_sessions:
            persistence.remember(self.settings, self.session_path)
        self.autosave()
        if self.keep_sessions:
            self.autosave_timer.start()

    def _rescore(self, *_args: object) -> None:
        """Show the evaluation of the chosen method, protocol and conventions."""
        if self.opened is None or not self.method_box.currentText():
            return
        method, protocol = self.method_box.currentText(), self.protocol_box.currentText()
        own = self.opened.methods[method].evaluations[protocol].protocol
        self.ap_box.setItemText(0, f"{AP_NAMES[own.ap]} (the protocol's)")
        self.self_box.setItemText(0, f"{SELF_NAMES[own.self_match]} (the protocol's)")
        ev = self.opened.evaluation(method, protocol, ap=self.ap_box.currentData(),
                                    self_match=self.self_box.currentData())
        self._set_evaluation(ev)

    def _set_evaluation(self, evaluation: Evaluation) -> None:
        self.evaluation = evaluation
        self.model.set_evaluation(evaluation)
        self.proxy.refresh()
        edges, counts = ap_histogram(evaluation)
        ks, precision = mean_precision_at(evaluation, CURVE_DEPTH)
        self.overview.set_dataset_curves(edges, counts, ks, precision,
                                         *cmc_curve(evaluation, CURVE_DEPTH))
        self._summary()
        self._count()
        if self.current is not None:
            self.show_query(self.current)

    def _summary(self) -> None:
        ev = self.evaluation
        assert ev is not None
        s = ev.summary
        keys = [k for k in ("mAP", "mP@1", "mP@10(revisitop)", "CMC@1", "CMC@5", "mINP")
                if k in s]
        values = " &nbsp; ".join(f"<b>{k}</b> {100 * s[k]:.2f}" for k in keys)
        p = ev.protocol
        self.summary.setText(f"{values} &nbsp;·&nbsp; {s['n_evaluated']:,} evaluated, "
                             f"{s['n_skipped']:,} skipped &nbsp;·&nbsp; {p.name}: "
                             f"{AP_NAMES[p.ap]}, {SELF_NAMES[p.self_match]}, ties keep "
                             "gallery order")

    def _count(self) -> None:
        self.count.setText(f"{self.proxy.rowCount():,} of {self.model.rowCount():,} "
                           "queries shown")

    # -- selection -------------------------------------------------------------------------
    def select_query(self, name: str) -> None:
        """Select the query called ``name`` (``--select``)."""
        assert self.opened is not None
        q = self.opened.dataset.query_by_name(name)
        index = self.proxy.mapFromSource(self.model.index(self.model.row_of(q), 0))
        if index.isValid():
            self.table.selectionModel().setCurrentIndex(
                index, QItemSelectionModel.SelectionFlag.ClearAndSelect
                | QItemSelectionModel.SelectionFlag.Rows)
        else:
            self.show_query(q)

    def _on_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid():
            self.show_query(self.model.query_of(self.proxy.mapToSource(current).row()))

    def show_query(self, q: int) -> None:
        """Show query ``q``: image and box, ranked tiles, missed positives, its PR curve."""
        ev, opened = self.evaluation, self.opened
        assert ev is not None and opened is not None
        self.current = q
        ds, ranking = ev.dataset, ev.ranking
        query = ds.queries[q]
        self._show_query_image(query.image, query.box)
        title = query.meta.get("title") or query.name
        self.query_title.setText(f"<b>{title}</b><br>{query.name}")
        pq = ev.per_query
        ap, p1 = pq["AP"][q], pq["P@1"][q]
        self.query_metrics.setText(
            "skipped: no positive left" if np.isnan(ap) else
            f"AP <b>{100 * ap:.1f}</b> &nbsp; P@1 <b>{100 * p1:.0f}</b> &nbsp; "
            f"{int(pq['n_positives'][q])} positives")
        top = ranking.top_indices[q]
        top = top[top >= 0]
        codes = ev.relevance(q, top)
        codes[(codes == IGNORED) & np.isin(top, query.group("same_camera"))] = SAME_CAMERA
        scores = ranking.top_scores[q][: len(top)]
        tiles, shown_rank = [], 0
        for g, code, score in zip(top, codes, scores, strict=True):
            ignored = code in (IGNORED, SAME_CAMERA)
            if ignored and not self.show_ignored:
                continue
            if not ignored and shown_rank >= self.top_k:
                break
            rank = None if ignored else shown_rank + 1
            shown_rank += not ignored
            tiles.append(Tile(int(g), ds.gallery[g], ds.image_paths.get(ds.gallery[g]), rank,
                              float(score), int(code)))
        self.grid.set_tiles(tiles)
        self.results_label.setText(f"<b>Ranked results</b>: the top {shown_rank}"
                                   + (" (the list ends here)" if shown_rank < self.top_k
                                      else ""))
        idx, ranks = ev.missed_positives(q, shown_rank)
        missed = [Tile(int(g), ds.gallery[g], ds.image_paths.get(ds.gallery[g]),
                       int(r) + 1 if r >= 0 else None, float("nan"), 1)
                  for g, r in zip(idx, ranks, strict=True)]
        hardest = f" — the hardest at rank {int(ranks[-1]) + 1}" if len(ranks) and ranks[
            -1] >= 0 else ""
        self.missed_label.setText(f"<b>Missed positives</b>: {len(missed)} outside the top "
                                  f"{shown_rank}{hardest}" if missed else
                                  "<b>Missed positives</b>: none — every positive is shown "
                                  "above")
        self.missed.set_tiles(missed)
        recall, precision = ev.pr_curve(q)
        ax, ay = ev.ap_curve(q)
        levels, mean = ev.mean_pr()
        self.plot.set_curves(recall, precision, ax, ay, levels, mean)
        self.overview.set_query(float(ap), *query_precision_at(ev, q, CURVE_DEPTH))
        if self.compare is not None and self.compare.isVisible():
            self._compare_tile(self.grid.tiles, 0 if self.grid.tiles else None)

    def _show_query_image(self, name: str, box: tuple[float, float, float, float] | None) -> None:
        assert self.opened is not None
        path = self.opened.dataset.image_paths.get(name)
        image = decode(path, 256)
        if not isinstance(image, QImage):
            self.query_image.setText("broken image" if image else f"(no image)\n{name}")
            return
        pixmap = QPixmap.fromImage(image)
        if box is not None and path is not None:
            with Image.open(path) as im:
                width = im.size[0]
            f = image.width() / width
            painter = QPainter(pixmap)
            painter.setPen(QPen(QColor(QUERY_BOX), 3))
            painter.drawRect(QRectF(box[0] * f, box[1] * f, (box[2] - box[0]) * f,
                                    (box[3] - box[1]) * f))
            painter.end()
        self.query_image.setPixmap(pixmap)

    # -- comparison --------------------------------------------------------------------------
    def _on_tile(self, gallery_index: int) -> None:
        tiles = self.grid.tiles
        at = next(i for i, t in enumerate(tiles) if t.index == gallery_index)
        self._compare_tile(tiles, at)

    def _on_missed_tile(self, gallery_index: int) -> None:
        tiles = self.missed.tiles
        at = next(i for i, t in enumerate(tiles) if t.index == gallery_index)
        self._compare_tile(tiles, at)

    def _compare_tile(self, tiles: list[Tile], at: int | None, sync: bool = False) -> None:
        """Show the query beside ``tiles[at]`` in the comparison window."""
        if at is None or self.current is None or self.evaluation is None:
            return
        ds = self.evaluation.dataset
        query = ds.queries[self.current]
        tile = tiles[at]
        if self.compare is None:
            self.compare = CompareWindow(self)
            self.compare.step.connect(self._compare_step)
        self._compare_tiles, self._compare_at = tiles, at
        colour, glyph, label = RELEVANCE[tile.relevance]
        rank = f"rank {tile.rank}" if tile.rank is not None else "ignored"
        score = "" if np.isnan(tile.score) else f", score {tile.score:.4f}"
        q_side = Side(query.image, ds.image_paths.get(query.image),
                      f"<b>query</b> {query.name}", QUERY_BOX, query.box)
        m_side = Side(tile.name, tile.path,
                      f"<b>{glyph} {label}</b>, {rank}{score}<br>{tile.name}", colour)
        self.compare.show_pair(q_side, m_side, sync=sync)
        self.compare.show()
        self.compare.raise_()

    def _compare_step(self, step: int) -> None:
        if self._compare_at is None:
            return
        at = self._compare_at + step
        if 0 <= at < len(self._compare_tiles):
            self._compare_tile(self._compare_tiles, at)

    # -- controls ----------------------------------------------------------------------------
    def _on_filter(self, text: str) -> None:
        self.proxy.set_text(text)
        self._count()

    def _focus_filter(self) -> None:
        self.filter_edit.setFocus()
        self.filter_edit.selectAll()

    def _on_failures(self, on: bool) -> None:
        self.proxy.set_failures_only(on)
        self._count()

    def set_ap_range(self, ap_range: tuple[float, float] | None) -> None:
        """Show only queries with AP in ``ap_range`` (fractions; None for all)."""
        low, high = ap_range if ap_range is not None else (0.0, 1.0)
        for spin, value in ((self.ap_low, low), (self.ap_high, high)):
            spin.blockSignals(True)
            spin.setValue(100 * value)
            spin.blockSignals(False)
        active = None if (low, high) == (0.0, 1.0) else (low, high)
        self.proxy.set_ap_range(active)
        self.overview.histogram.set_active(active)
        self._count()

    def _on_ap_spin(self, _value: float) -> None:
        low, high = self.ap_low.value() / 100, self.ap_high.value() / 100
        self.set_ap_range((min(low, high), max(low, high)))

    def _on_k(self, k: int) -> None:
        self.top_k = k
        if self.current is not None:
            self.show_query(self.current)

    def _on_ignored(self, on: bool) -> None:
        self.show_ignored = on
        if self.current is not None:
            self.show_query(self.current)

    def _zoom(self, step: int) -> None:
        self.grid.set_tile_size(self.grid.tile_size + step)

    def _jump(self, row: int) -> None:
        n = self.proxy.rowCount()
        if n:
            self.table.selectRow(row % n)

    def next_failure(self) -> None:
        """Select the next query (in table order) whose first result is wrong."""
        n = self.proxy.rowCount()
        start = self.table.currentIndex().row() + 1 if self.table.currentIndex().isValid() else 0
        for i in range(n):
            row = (start + i) % n
            if self.model.p_at_1(self.proxy.mapToSource(self.proxy.index(row, 0)).row()) == 0:
                self.table.selectRow(row)
                return
        self.statusBar().showMessage("No failure among the queries shown")

    def visible_thumbnails(self) -> list[tuple[str, Path | None]]:
        """Return the (name, path) of every tile shown (for --screenshot)."""
        return [(t.name, t.path) for t in (*self.grid.tiles, *self.missed.tiles)]

    # -- drag and drop -------------------------------------------------------------------------
    def dragEnterEvent(self, event) -> None:  # noqa: N802
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:  # noqa: N802
        paths = [Path(u.toLocalFile()) for u in event.mimeData().urls() if u.isLocalFile()]
        if paths:
            event.acceptProposedAction()
            self.open_dropped(paths)

    def open_dropped(self, paths: list[Path], sync: bool = False) -> None:
        """Open what was dropped: a dataset with its descriptor files or rankings; methods
        alone are added to the open dataset; a dataset alone asks for its methods."""
        roles = classify_paths(paths)
        methods = [*roles.descriptors, *roles.rankings]
        if roles.sessions:
            self.open_session(roles.sessions[0], sync=sync)
        elif len(roles.datasets) > 1:
            self.show_error("Drop one dataset at a time (with its descriptor files): got "
                            + ", ".join(p.name for p in roles.datasets))
        elif roles.datasets and methods:
            self.open_paths(roles.datasets[0], *methods, sync=sync)
        elif methods and self.opened is not None:
            self.add_methods(methods, sync=sync)
        elif methods:
            self.show_error("Drop the dataset together with its descriptor files, or open "
                            "the dataset first (Ctrl+O)")
        elif roles.datasets:
            dialog = OpenDialog(self, OpenRequest(roles.datasets[0]))
            if dialog.exec():
                request = dialog.request()
                if request is not None:
                    self.open_request(request)

    def closeEvent(self, event) -> None:  # noqa: N802
        self.opener.wait()
        self.autosave_timer.stop()
        self.autosave()
        for child in self.findChildren(QWidget):
            if child.isWindow() and child.isVisible():  # the comparison, message boxes
                child.close()
        super().closeEvent(event)
