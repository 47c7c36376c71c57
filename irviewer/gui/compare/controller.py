"""Compare mode: "Compare with" beside Method. When a method is chosen, the query table gains
its AP and ΔAP (and the better/worse filters), the plots a scatter tab, the summary bar a
line with the paired statistics, and the window the two ranked lists of the selected query
side by side. Numbers come from :mod:`irviewer.view.compare_view` (the core's
:mod:`irviewer.core.paired`); the slow statistics run off the GUI thread."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QObject, QRunnable, Qt, QThreadPool, Signal
from PySide6.QtWidgets import QComboBox, QLabel, QSplitter

from irviewer.core.errors import InputError
from irviewer.core.evaluation import Evaluation
from irviewer.core.paired import PairedComparison, statistics_loaded
from irviewer.gui.compare.scatter import APScatter
from irviewer.gui.compare.strips import CompareStrips
from irviewer.view.compare_view import (
    PairedStatistics,
    compare_shown,
    compare_summary_html,
    paired_columns,
    paired_statistics,
    rank_marks,
)
from irviewer.view.result_list import result_list

if TYPE_CHECKING:
    from irviewer.gui.main_window import MainWindow

NONE = "none"
#: Up to this many paired queries the statistics are computed at once (revisited Oxford's
#: 70: 0.02 s); beyond, in a worker thread, the summary reading "…" until they arrive. The
#: first comparison of a process is computed in the worker too: it imports scipy.stats.
SYNC_MAX_QUERIES = 100
#: Tiles per strip (the strips follow the results' depth up to this).
STRIP_DEPTH = 50


class _Job(QRunnable):
    """Computes :func:`paired_statistics` and reports ``(generation, statistics)``."""

    def __init__(self, generation: int, comparison: PairedComparison,
                 done: Signal) -> None:
        super().__init__()
        self.generation, self.comparison, self.done = generation, comparison, done

    def run(self) -> None:
        self.done.emit(self.generation, paired_statistics(self.comparison))


class CompareMode(QObject):
    """Owns the "Compare with" box, the comparison line, the scatter tab and the strips of
    ``window``; the window calls :meth:`rescore` after it re-scores and :meth:`show_query`
    when it shows a query."""

    statistics_ready = Signal(int, object)

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.w = window
        self.box = QComboBox()
        self.box.addItem(NONE)
        self.box.setEnabled(False)
        self.box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.box.setToolTip("Compare the shown method (the baseline) with another, query by "
                            "query: ΔAP = AP under it − AP under the shown method")
        top = window.bar.layout().itemAt(0).layout()
        at = top.indexOf(window.bar.method_box) + 1
        top.insertWidget(at, QLabel("Compare with:"))
        top.insertWidget(at + 1, self.box)
        self.line = QLabel()
        self.line.setTextFormat(Qt.TextFormat.RichText)
        self.line.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.line.setWordWrap(True)
        self.line.setVisible(False)
        window.bar.layout().addWidget(self.line)
        self.scatter = APScatter()
        overview = window.plots.overview
        self.scatter_tab = overview.addTab(self.scatter, "AP vs AP")
        overview.setTabVisible(self.scatter_tab, False)
        self.scatter.query_clicked.connect(self._select)
        self.strips = CompareStrips(window.cache)
        self.strips.setVisible(False)
        # Beside the results, in a splitter of their own: the window's three panes (and the
        # sessions' splitter sizes) stay as they are.
        self.middle = QSplitter()
        self.middle.setChildrenCollapsible(False)
        window.split.replaceWidget(1, self.middle)
        self.middle.addWidget(window.results)
        self.middle.addWidget(self.strips)
        self.other: Evaluation | None = None
        self.comparison: PairedComparison | None = None
        self.statistics: PairedStatistics | None = None
        self.generation = 0
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(1)  # one at a time; a newer one replaces queued ones
        self.statistics_ready.connect(self._arrived)
        self.box.currentIndexChanged.connect(lambda _i: self.rescore(from_box=True))
        window.opening.opened.connect(self._fill)

    @property
    def active(self) -> bool:
        """Return whether a method is being compared."""
        return self.comparison is not None

    def compared(self) -> str | None:
        """Return the compared method's name, or None."""
        return None if self.box.currentIndex() <= 0 else self.box.currentText()

    def set_compared(self, name: str | None) -> None:
        """Compare with the method called ``name`` (None: compare mode off)."""
        i = self.box.findText(name) if name else 0
        self.box.setCurrentIndex(max(0, i))

    def _fill(self, *_args: object) -> None:
        opened = self.w.opened
        names = list(opened.methods) if opened is not None else []
        keep = self.compared()
        self.box.blockSignals(True)
        self.box.clear()
        self.box.addItems([NONE, *names])
        self.box.setCurrentIndex(max(0, self.box.findText(keep)) if keep else 0)
        self.box.setEnabled(len(names) > 1)
        self.box.blockSignals(False)
        self.rescore(from_box=True)

    # -- what is shown ---------------------------------------------------------------------
    def rescore(self, from_box: bool = False) -> None:
        """Compare the shown evaluation with the chosen method (or leave compare mode)."""
        w, other = self.w, self.compared()
        self.generation += 1  # statistics still running belong to another comparison
        if (w.opened is None or w.evaluation is None or other is None
                or other not in w.opened.methods):
            self._off()
            return
        method, protocol, ap, self_match = w.bar.choice()
        self.other = w.opened.evaluation(other, protocol, ap=ap, self_match=self_match)
        try:
            c = compare_shown(method, w.evaluation, other, self.other)
        except InputError as e:
            self._off()
            self.line.setText(f"Compare with {other}: {e}")
            self.line.setVisible(True)
            return
        self.comparison, self.statistics = c, None
        other_ap, delta = paired_columns(c, w.evaluation.dataset)
        w.queries.set_compared(other, other_ap, delta)
        paired = np.flatnonzero(~np.isnan(delta))
        self.scatter.set_points(paired, w.evaluation.per_query["AP"][paired], other_ap[paired],
                                method, other)
        overview = w.plots.overview
        overview.setTabVisible(self.scatter_tab, True)
        if from_box:
            overview.setCurrentIndex(self.scatter_tab)
        self.line.setVisible(True)
        if c.n <= SYNC_MAX_QUERIES and statistics_loaded():
            self.statistics = paired_statistics(c)
        else:
            self.pool.clear()  # statistics not started yet are stale already
            self.pool.start(_Job(self.generation, c, self.statistics_ready))
        self._show_line()
        self.strips.setVisible(True)
        if from_box and w.current is not None:  # else the window shows the query next
            self.show_query(w.current)

    def show_query(self, q: int) -> None:
        """Show query ``q``'s point and both ranked lists (compare mode only)."""
        if self.comparison is None or self.other is None or self.w.evaluation is None:
            return
        self.scatter.set_selected(q)
        shown, other = self.w.evaluation, self.other
        depth = min(self.w.results.depth, STRIP_DEPTH)
        here = result_list(shown, q, depth, False).tiles
        there = result_list(other, q, depth, False).tiles
        c = self.comparison
        self.strips.show_lists(
            (self._title(c.baseline, shown, q), self._title(c.method, other, q)),
            (here, rank_marks(here, other, q, c.method)),
            (there, rank_marks(there, shown, q, c.baseline)))

    @staticmethod
    def _title(name: str, ev: Evaluation, q: int) -> str:
        ap = float(ev.per_query["AP"][q])
        return f"<b>{name}</b><br>AP " + ("—" if np.isnan(ap) else f"{100 * ap:.1f}")

    def wait(self) -> None:
        """Block until running statistics end (closing the window, tests)."""
        self.pool.waitForDone()

    def _arrived(self, generation: int, statistics: PairedStatistics) -> None:
        if generation == self.generation and self.comparison is not None:
            self.statistics = statistics
            self._show_line()

    def _show_line(self) -> None:
        assert self.comparison is not None
        self.line.setText(compare_summary_html(self.comparison, self.statistics))

    def _off(self) -> None:
        w = self.w
        self.comparison = self.other = self.statistics = None
        w.queries.set_compared("", None, None)
        self.line.setVisible(False)
        w.plots.overview.setTabVisible(self.scatter_tab, False)
        self.strips.setVisible(False)

    def _select(self, q: int) -> None:
        if not self.w.queries.select_query(q):
            self.w.show_query(q)
