"""The inspector window: query table on the left, the query and its ranked results in the
middle (relevance by frame colour and badge), missed positives below, the precision-recall
plot on the right, the protocol's headline numbers on top. Thin: the core computes, this
window asks and shows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image
from PySide6.QtCore import QItemSelectionModel, QModelIndex, QRectF, Qt
from PySide6.QtGui import QColor, QImage, QKeySequence, QPainter, QPen, QPixmap, QShortcut
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMessageBox,
    QScrollArea,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from irviewer.core.evaluation import IGNORED, Evaluation
from irviewer.gui.models import QueryFilter, QueryTableModel
from irviewer.gui.plots import PRPlot
from irviewer.gui.theme import QUERY_BOX, legend_html
from irviewer.gui.thumbnails import ThumbnailCache, decode
from irviewer.gui.tiles import Tile, TileGrid
from irviewer.gui.workers import Opener
from irviewer.session import Opened


class MainWindow(QMainWindow):
    """The irviewer inspector."""

    def __init__(self, top_k: int = 50) -> None:
        super().__init__()
        self.setWindowTitle("irviewer")
        self.resize(1480, 900)
        self.top_k = top_k
        self.opened: Opened | None = None
        self.evaluation: Evaluation | None = None
        self.current: int | None = None
        self.show_ignored = False
        self.last_error: str | None = None
        self.cache = ThumbnailCache(size=200)
        self.opener = Opener()
        self.opener.progress.connect(self._on_progress)
        self.opener.opened.connect(self.set_opened)
        self.opener.failed.connect(self.show_error)
        self._build()
        self._shortcuts()

    # -- layout ------------------------------------------------------------------------
    def _build(self) -> None:
        self.summary = QLabel("Open a dataset (Ctrl+O)")
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.protocol_box = QComboBox()
        self.protocol_box.currentTextChanged.connect(self._on_protocol)
        top = QHBoxLayout()
        top.addWidget(QLabel("Protocol:"))
        top.addWidget(self.protocol_box)
        top.addSpacing(12)
        top.addWidget(self.summary, 1)

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
        for column, width in enumerate((190, 52, 52, 70)):
            self.table.horizontalHeader().resizeSection(column, width)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.table.selectionModel().currentRowChanged.connect(self._on_row)
        self.filter_edit = QLineEdit()
        self.filter_edit.setPlaceholderText("Filter queries…  (Ctrl+F)")
        self.filter_edit.textChanged.connect(self._on_filter)
        self.failures = QCheckBox("Failures only (P@1 = 0)")
        self.failures.toggled.connect(self._on_failures)
        self.count = QLabel("")
        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.addWidget(self.filter_edit)
        lv.addWidget(self.failures)
        lv.addWidget(self.table, 1)
        lv.addWidget(self.count)

        self.query_image = QLabel()
        self.query_image.setFixedSize(260, 260)
        self.query_image.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.query_title = QLabel("")
        self.query_title.setWordWrap(True)
        self.query_metrics = QLabel("")
        self.query_metrics.setTextFormat(Qt.TextFormat.RichText)
        self.ignored_box = QCheckBox("Show ignored items where they ranked")
        self.ignored_box.toggled.connect(self._on_ignored)
        info = QVBoxLayout()
        info.addWidget(self.query_title)
        info.addWidget(self.query_metrics)
        info.addWidget(self.ignored_box)
        info.addWidget(QLabel(legend_html()))
        info.addStretch(1)
        head = QHBoxLayout()
        head.addWidget(self.query_image)
        head.addLayout(info, 1)

        self.grid = TileGrid(self.cache)
        self.grid.clicked.connect(self._on_tile)
        self.missed_label = QLabel("")
        self.missed = TileGrid(self.cache, tile_size=96)
        results = QWidget()
        rv = QVBoxLayout(results)
        rv.addWidget(QLabel("<b>Ranked results</b>"))
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

        split = QSplitter()
        split.addWidget(left)
        split.addWidget(middle)
        split.addWidget(self.plot)
        split.setSizes([360, 790, 330])
        central = QWidget()
        cv = QVBoxLayout(central)
        cv.addLayout(top)
        cv.addWidget(split, 1)
        self.setCentralWidget(central)
        self.statusBar().showMessage("Ready")

    def _shortcuts(self) -> None:
        for keys, slot in ((QKeySequence.StandardKey.Open, self.open_dialog),
                           (QKeySequence.StandardKey.Find, self.filter_edit.setFocus),
                           ("F", self.next_failure), ("+", lambda: self._zoom(16)),
                           ("=", lambda: self._zoom(16)), ("-", lambda: self._zoom(-16)),
                           ("Home", lambda: self._jump(0)), ("End", lambda: self._jump(-1))):
            QShortcut(QKeySequence(keys), self, activated=slot)

    # -- opening -------------------------------------------------------------------------
    def open_paths(self, dataset: Path, descriptors: Path, sync: bool = False) -> None:
        """Read, rank and score in the background (``sync`` for tests and screenshots)."""
        self.statusBar().showMessage(f"Opening {Path(dataset).name}…")
        self.opener.open(dataset, descriptors, sync=sync)

    def open_dialog(self) -> None:
        """File ▸ Open: choose a dataset, then its descriptor file."""
        dataset, _ = QFileDialog.getOpenFileName(self, "Open a dataset")
        if not dataset:
            return
        descriptors, _ = QFileDialog.getOpenFileName(self, "Open its descriptor file")
        if descriptors:
            self.open_paths(Path(dataset), Path(descriptors))

    def show_error(self, message: str) -> None:
        """Show a reader's sentence in a dialog (non-blocking)."""
        self.last_error = message
        self.statusBar().showMessage("Could not open the dataset")
        box = QMessageBox(QMessageBox.Icon.Warning, "irviewer", message, parent=self)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()

    def _on_progress(self, stage: str, done: int, total: int) -> None:
        suffix = f" {done}/{total}" if total else ""
        self.statusBar().showMessage(f"{stage}{suffix}…")

    def set_opened(self, opened: Opened) -> None:
        """Show a freshly opened dataset: protocols, query table, first query."""
        self.opened = opened
        ds = opened.dataset
        self.statusBar().showMessage(
            f"{ds.label()}: {ds.n_queries} queries, {ds.n_gallery} gallery images, "
            f"descriptors {opened.descriptors_path.name}"
            + (f" — {ds.notes[0]}" if ds.notes else ""))
        self.protocol_box.blockSignals(True)
        self.protocol_box.clear()
        self.protocol_box.addItems(list(opened.evaluations))
        self.protocol_box.blockSignals(False)
        self._set_evaluation(opened.evaluations[self.protocol_box.currentText()])
        self._jump(0)

    def _set_evaluation(self, evaluation: Evaluation) -> None:
        self.evaluation = evaluation
        self.model.set_evaluation(evaluation)
        self._summary()
        self._count()
        if self.current is not None:
            self.show_query(self.current)

    def _summary(self) -> None:
        ev = self.evaluation
        assert ev is not None
        s = ev.summary
        keys = [k for k in ("mAP", "mP@1", "mP@10(revisitop)", "CMC@1", "mINP") if k in s]
        values = " &nbsp; ".join(f"<b>{k}</b> {100 * s[k]:.2f}" for k in keys)
        rule = "finite-sum AP" if ev.protocol.ap == "finite" else "trapezoid AP"
        self.summary.setText(f"{values} &nbsp;·&nbsp; {s['n_evaluated']} evaluated, "
                             f"{s['n_skipped']} skipped &nbsp;·&nbsp; {rule}, ties keep "
                             "gallery order")

    def _count(self) -> None:
        self.count.setText(f"{self.proxy.rowCount()} of {self.model.rowCount()} queries shown")

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
        scores = ranking.top_scores[q][: len(top)]
        tiles, shown_rank = [], 0
        for g, code, score in zip(top, codes, scores, strict=True):
            if code == IGNORED and not self.show_ignored:
                continue
            rank = None if code == IGNORED else shown_rank + 1
            shown_rank += code != IGNORED
            tiles.append(Tile(int(g), ds.gallery[g], ds.image_paths.get(ds.gallery[g]), rank,
                              float(score), int(code)))
            if shown_rank >= self.top_k:
                break
        self.grid.set_tiles(tiles)
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

    # -- controls ----------------------------------------------------------------------------
    def _on_protocol(self, name: str) -> None:
        if self.opened is not None and name in self.opened.evaluations:
            self._set_evaluation(self.opened.evaluations[name])

    def _on_filter(self, text: str) -> None:
        self.proxy.setFilterFixedString(text)
        self._count()

    def _on_failures(self, on: bool) -> None:
        self.proxy.set_failures_only(on)
        self._count()

    def _on_ignored(self, on: bool) -> None:
        self.show_ignored = on
        if self.current is not None:
            self.show_query(self.current)

    def _on_tile(self, gallery_index: int) -> None:
        assert self.opened is not None
        self.statusBar().showMessage(self.opened.dataset.gallery[gallery_index])

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

    def visible_thumbnails(self) -> list[tuple[str, Path | None]]:
        """Return the (name, path) of every tile shown (for --screenshot)."""
        return [(t.name, t.path) for t in (*self.grid.tiles, *self.missed.tiles)]

    def closeEvent(self, event) -> None:  # noqa: N802
        self.opener.wait()
        super().closeEvent(event)
