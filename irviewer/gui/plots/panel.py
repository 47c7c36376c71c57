"""The plots on the right: the selected query's PR curve over the mean, and the dataset
overview (AP histogram, P@k, CMC). Numbers come from the core; clicking a histogram bar asks
for that AP range (``ap_range_requested``)."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QSplitter, QVBoxLayout, QWidget

from irviewer.core.curves import ap_histogram, cmc_curve, mean_precision_at, query_precision_at
from irviewer.core.evaluation import Evaluation
from irviewer.gui.plots.conventions_table import ConventionsTable
from irviewer.gui.plots.overview import Overview
from irviewer.gui.plots.pr_plot import PR_LEGEND, PRPlot, pr_legend
from irviewer.view.mean_pr import MeanPR, curve_words

CURVE_DEPTH = 50  # the P@k and CMC curves run from 1 to this k


class PlotsPanel(QSplitter):
    """PR plot over the overview tabs. Emits ``ap_range_requested(range)`` with (low, high)
    fractions when a histogram bar is clicked, None when the active bar is clicked again."""

    ap_range_requested = Signal(object)

    def __init__(self) -> None:
        super().__init__(Qt.Orientation.Vertical)
        self.plot = PRPlot()
        self.mean_pr = MeanPR()
        self.pr_legend = QLabel(PR_LEGEND)
        self.pr_legend.setWordWrap(True)
        pr = QWidget()
        pr_layout = QVBoxLayout(pr)
        pr_layout.setContentsMargins(0, 0, 0, 0)
        pr_layout.setSpacing(2)
        pr_layout.addWidget(self.pr_legend)
        pr_layout.addWidget(self.plot, 1)
        self.overview = Overview()
        self.overview.histogram.range_clicked.connect(
            lambda lo, hi: self.ap_range_requested.emit((lo, hi)))
        self.overview.histogram.range_cleared.connect(
            lambda: self.ap_range_requested.emit(None))
        self.conventions = ConventionsTable()
        self.conventions_tab = self.overview.addTab(self.conventions, "Conventions")
        self.overview.currentChanged.connect(self._tab_changed)
        self.addWidget(pr)
        self.addWidget(self.overview)
        self.setSizes([440, 360])

    def show_evaluation(self, evaluation: Evaluation,
                        changed: np.ndarray | None = None) -> None:
        """Show the dataset's curves under ``evaluation`` (``changed``: the queries a label
        correction re-scored, the only ones the mean PR curve is recomputed for)."""
        self.mean_pr.update(evaluation, changed)
        self.pr_legend.setText(pr_legend(curve_words(evaluation)))
        edges, counts = ap_histogram(evaluation)
        ks, precision = mean_precision_at(evaluation, CURVE_DEPTH)
        self.overview.set_dataset_curves(edges, counts, ks, precision,
                                         *cmc_curve(evaluation, CURVE_DEPTH))
        self.conventions.show_evaluation(evaluation)
        self._tab_changed(self.overview.currentIndex())

    def _tab_changed(self, index: int) -> None:
        """Fill the conventions tab when it is the one shown (computed only then)."""
        if index == self.conventions_tab:
            self.conventions.refresh()

    def show_query(self, evaluation: Evaluation, q: int) -> None:
        """Show query ``q``'s PR curve, its AP bin and its P@k curve."""
        recall, precision = evaluation.pr_curve(q)
        ax, ay = evaluation.ap_curve(q)
        levels, mean = self.mean_pr.curve(evaluation)
        self.plot.set_curves(recall, precision, ax, ay, levels, mean)
        ap = float(evaluation.per_query["AP"][q])
        self.overview.set_query(ap, *query_precision_at(evaluation, q, CURVE_DEPTH))

    def add_tab(self, widget: QWidget, title: str) -> int:
        """Add ``widget`` as a hidden tab of the overview (compare mode's scatter); return
        its index for :meth:`set_tab_shown`."""
        index = self.overview.addTab(widget, title)
        self.overview.setTabVisible(index, False)
        return index

    def set_tab_shown(self, index: int, shown: bool, current: bool = False) -> None:
        """Show or hide the overview's tab ``index`` (``current``: and bring it to the
        front)."""
        self.overview.setTabVisible(index, shown)
        if shown and current:
            self.overview.setCurrentIndex(index)

    def set_active_range(self, ap_range: tuple[float, float] | None) -> None:
        """Outline the histogram bar of the table's AP filter (None: no filter)."""
        self.overview.histogram.set_active(ap_range)
