"""The dataset overview under the PR plot: a histogram of AP over queries (click a bar to
filter the table to it), mean P@k beside the selected query's, and CMC for
re-identification. Plot items are built once and updated with setData / setOpts; the
numbers come from :mod:`irviewer.core.curves`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QTabWidget, QVBoxLayout, QWidget

from irviewer.core.curves import ap_bin_edges, ap_bin_index

if TYPE_CHECKING:
    from pyqtgraph.GraphicsScene.mouseEvents import MouseClickEvent

from irviewer.gui.theme import ACTIVE_BAR, BAR, MEAN_CURVE, QUERY_CURVE, SELECTED_BAR
from irviewer.view import palette

_DASH = pg.QtCore.Qt.PenStyle.DashLine


def _plot(bottom: str, left: str) -> pg.PlotWidget:
    plot = pg.PlotWidget(background=palette.WHITE, enableMenu=False)  # no menu: none is built
    plot.setLabel("bottom", bottom)
    plot.setLabel("left", left)
    plot.showGrid(x=True, y=True, alpha=0.25)
    plot.setMouseEnabled(x=False, y=False)
    plot.hideButtons()
    return plot


class APHistogram(pg.PlotWidget):
    """Evaluated queries per AP bin; the selected query's bin is highlighted, the bin the
    table is filtered to is outlined. Clicking a bar emits ``range_clicked(low, high)``
    (fractions), clicking the filtered bar again ``range_cleared()``."""

    range_clicked = Signal(float, float)
    range_cleared = Signal()

    def __init__(self) -> None:
        super().__init__(background=palette.WHITE, enableMenu=False)
        self.setLabel("bottom", "AP (%)")
        self.setLabel("left", "queries")
        self.showGrid(y=True, alpha=0.25)
        self.setMouseEnabled(x=False, y=False)
        self.hideButtons()
        self.setXRange(0, 100, padding=0.02)
        self.edges = ap_bin_edges(10)
        self.counts = np.zeros(10, dtype=np.int64)
        self.active: tuple[float, float] | None = None
        self.selected: int | None = None
        self.bars = pg.BarGraphItem(x0=[], x1=[], height=[], brush=BAR, pen=palette.WHITE)
        self.addItem(self.bars)
        self.setToolTip("Queries per AP range; click a bar to list only those queries, "
                        "click it again to list all")
        self.scene().sigMouseClicked.connect(self._on_click)

    def set_histogram(self, edges: np.ndarray, counts: np.ndarray) -> None:
        """Show ``counts`` per bin between ``edges`` (fractions of AP)."""
        self.edges, self.counts = np.asarray(edges, dtype=float), np.asarray(counts)
        self.setYRange(0, max(1, int(self.counts.max(initial=0))) * 1.08, padding=0)
        self._redraw()

    def set_selected_ap(self, ap: float) -> None:
        """Highlight the bin of the selected query's AP (nan: none)."""
        i = int(ap_bin_index(ap, self.edges))
        self.selected = None if i < 0 else i
        self._redraw()

    def set_active(self, ap_range: tuple[float, float] | None) -> None:
        """Outline the bin the table is filtered to (None: no AP filter)."""
        self.active = ap_range
        self._redraw()

    def bin_of(self, x_percent: float) -> int | None:
        """Return the bin under ``x_percent`` on the AP axis, or None outside the bins."""
        if not 0 <= x_percent <= 100:
            return None
        i = int(ap_bin_index(x_percent / 100, self.edges))
        return i if i >= 0 else None

    def click_bin(self, i: int) -> None:
        """What a click on bar ``i`` does: filter to it, or clear when it is the filter."""
        low, high = float(self.edges[i]), float(self.edges[i + 1])
        if self.active == (low, high):
            self.range_cleared.emit()
        else:
            self.range_clicked.emit(low, high)

    def _redraw(self) -> None:
        n = len(self.counts)
        brushes = [SELECTED_BAR if i == self.selected else BAR for i in range(n)]
        pens = [pg.mkPen(ACTIVE_BAR, width=3) if self.active == (
            float(self.edges[i]), float(self.edges[i + 1])) else pg.mkPen(palette.WHITE)
            for i in range(n)]
        self.bars.setOpts(x0=self.edges[:-1] * 100, x1=self.edges[1:] * 100,
                          height=self.counts, brushes=brushes, pens=pens)

    def _on_click(self, event: MouseClickEvent) -> None:
        if not self.plotItem.sceneBoundingRect().contains(event.scenePos()):
            return
        x = self.plotItem.vb.mapSceneToView(event.scenePos()).x()
        i = self.bin_of(x)
        if i is not None:
            self.click_bin(i)


class _Later(QWidget):
    """A tab's place, filled with its plot when the tab is first shown (or the plot is
    asked for): a pyqtgraph plot takes about 20 ms to build, and most sessions never open
    most tabs."""

    def __init__(self, build: Callable[[], pg.PlotWidget]) -> None:
        super().__init__()
        self._build = build
        self.plot: pg.PlotWidget | None = None
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)

    def get(self) -> pg.PlotWidget:
        """Return the plot, building it the first time."""
        if self.plot is None:
            self.plot = self._build()
            self._layout.addWidget(self.plot)
        return self.plot

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt's name)
        self.get()
        super().showEvent(event)


class Overview(QTabWidget):
    """Tabs: the AP histogram, P@k (mean and the selected query), CMC (re-identification
    protocols only). The P@k and CMC plots are built when first shown; the curves given
    before are kept and drawn then."""

    def __init__(self) -> None:
        super().__init__()
        self.histogram = APHistogram()
        self._precision = _Later(self._build_precision)
        self._cmc = _Later(self._build_cmc)
        self._dataset: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        self._query: tuple[np.ndarray, np.ndarray] | None = None
        self.addTab(self.histogram, "AP histogram")
        self.addTab(self._precision, "P@k")
        self.cmc_index = self.addTab(self._cmc, "CMC")

    @property
    def precision(self) -> pg.PlotWidget:
        """Return the P@k plot (built on first use)."""
        return self._precision.get()

    @property
    def mean_precision(self) -> pg.PlotDataItem:
        """Return the mean P@k curve."""
        return self.precision.mean_curve

    @property
    def query_precision(self) -> pg.PlotDataItem:
        """Return the selected query's P@k curve."""
        return self.precision.query_curve

    @property
    def cmc(self) -> pg.PlotWidget:
        """Return the CMC plot (built on first use)."""
        return self._cmc.get()

    @property
    def cmc_curve(self) -> pg.PlotDataItem:
        """Return the CMC curve."""
        return self.cmc.curve

    def _build_precision(self) -> pg.PlotWidget:
        plot = _plot("k (results looked at)", "precision at k")
        plot.setYRange(0, 1.02, padding=0)
        plot.addLegend(offset=(-10, 10))
        plot.mean_curve = plot.plot(
            [], [], pen=pg.mkPen(MEAN_CURVE, width=2, style=_DASH), name="mean P@k")
        plot.query_curve = plot.plot(
            [], [], pen=pg.mkPen(QUERY_CURVE, width=2.5), name="this query")
        self._draw_precision(plot)
        return plot

    def _build_cmc(self) -> pg.PlotWidget:
        plot = _plot("rank k", "CMC: first match within k")
        plot.setYRange(0, 1.02, padding=0)
        plot.curve = plot.plot([], [], pen=pg.mkPen(QUERY_CURVE, width=2.5), symbol="o",
                               symbolSize=5, symbolBrush=QUERY_CURVE)
        self._draw_cmc(plot)
        return plot

    def _draw_precision(self, plot: pg.PlotWidget) -> None:
        """Draw the kept P@k curves on the (built) P@k plot."""
        if self._dataset is not None:
            ks, mean, _, _ = self._dataset
            plot.mean_curve.setData(ks, np.nan_to_num(mean))
            plot.setXRange(1, max(2, int(ks[-1]) if len(ks) else 2), padding=0.02)
        if self._query is not None:
            plot.query_curve.setData(self._query[0], np.nan_to_num(self._query[1]))

    def _draw_cmc(self, plot: pg.PlotWidget) -> None:
        """Draw the kept CMC curve on the (built) CMC plot."""
        if self._dataset is not None:
            _, _, cmc_ks, cmc = self._dataset
            plot.curve.setData(cmc_ks, np.nan_to_num(cmc))
            if len(cmc_ks):
                plot.setXRange(1, max(2, int(cmc_ks[-1])), padding=0.02)

    def set_dataset_curves(self, edges: np.ndarray, counts: np.ndarray, ks: np.ndarray,
                           mean_precision: np.ndarray, cmc_ks: np.ndarray,
                           cmc: np.ndarray) -> None:
        """Show the curves of a new evaluation (the CMC tab only when there is a CMC)."""
        self.histogram.set_histogram(edges, counts)
        self._dataset = (np.asarray(ks), np.asarray(mean_precision), np.asarray(cmc_ks),
                         np.asarray(cmc))
        if self._precision.plot is not None:
            self._draw_precision(self._precision.plot)
        if self._cmc.plot is not None:
            self._draw_cmc(self._cmc.plot)
        self.setTabVisible(self.cmc_index, bool(len(cmc_ks)))

    def set_query(self, ap: float, ks: np.ndarray, precision: np.ndarray) -> None:
        """Show the selected query's AP bin and P@k curve."""
        self.histogram.set_selected_ap(ap)
        self._query = (np.asarray(ks), np.asarray(precision))
        if self._precision.plot is not None:
            self.query_precision.setData(ks, np.nan_to_num(precision))
