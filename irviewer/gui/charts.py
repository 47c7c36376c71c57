"""Dataset charts beside one query's PR plot: a histogram of AP over the evaluated queries
(click a bar to ask for that AP range), P@k (mean and the selected query) and CMC.

All three are :class:`pyqtgraph.PlotItem` s in ONE :class:`pyqtgraph.GraphicsLayoutWidget`
(:class:`Charts`): one QGraphicsView and one scene instead of a PlotWidget per chart, so a
window adds a single graphics view however many charts it shows. Every plot item is built
once and updated with ``setData`` / ``setOpts``; nothing is removed from the scene while the
window lives (an item taken out of its scene is what pyqtgraph's exit clean-up has to adopt).
Clicks are read by each histogram's own ViewBox, not through a connection to the scene.

The numbers come from the core (:meth:`Evaluation.ap_values`, :meth:`precision_curve`,
:meth:`query_precision_curve`, :meth:`cmc_curve`); binning AP values into bars is the only
arithmetic here.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal

from irviewer.core.curves import ap_bin_edges, ap_bin_index
from irviewer.core.evaluation import Evaluation
from irviewer.gui.theme import (
    ACTIVE_BAR,
    BAR,
    CMC_CURVE,
    MEAN_CURVE,
    QUERY_CURVE,
    SELECTED_BAR,
)

#: The P@k and CMC curves run from k = 1 to this k by default.
DEFAULT_DEPTH = 50


class _ClickViewBox(pg.ViewBox):
    """A ViewBox that reports a left click at a point of its data coordinates."""

    left_clicked = Signal(float, float)

    def mouseClickEvent(self, ev) -> None:  # noqa: N802 (Qt's name)
        if ev.button() == Qt.MouseButton.LeftButton:
            ev.accept()
            at = self.mapToView(ev.pos())
            self.left_clicked.emit(float(at.x()), float(at.y()))
            return
        super().mouseClickEvent(ev)


def _fixed_view(plot: pg.PlotItem) -> None:
    plot.setMenuEnabled(False)
    plot.setMouseEnabled(x=False, y=False)
    plot.hideButtons()


class APHistogram(pg.PlotItem):
    """Evaluated queries per AP bin (x in AP %, bins ``edges[i] <= AP < edges[i+1]``, the last
    one also AP = 1: :func:`irviewer.core.curves.ap_bin_index`). The selected query's bin
    is filled darker; the active bin (the AP range the table is filtered to) is outlined.

    Clicking bar i emits ``range_clicked(low, high)`` (fractions of AP) and makes it active;
    clicking the active bar again emits ``range_cleared()`` and clears it.
    """

    range_clicked = Signal(float, float)
    range_cleared = Signal()

    def __init__(self, bins: int = 10) -> None:
        super().__init__(viewBox=_ClickViewBox(), enableMenu=False)
        if isinstance(bins, bool) or not isinstance(bins, int) or bins < 1:
            raise ValueError(f"the number of AP bins must be at least 1, not {bins!r}")
        self.setLabel("bottom", "AP (%)")
        self.setLabel("left", "queries")
        self.showGrid(y=True, alpha=0.25)
        _fixed_view(self)
        self.setXRange(0, 100, padding=0.02)
        self.setYRange(0, 1, padding=0)
        self.edges = ap_bin_edges(bins)
        self.counts = np.zeros(bins, dtype=np.int64)
        self.selected: int | None = None
        self.active: tuple[float, float] | None = None
        self.bars = pg.BarGraphItem(x0=self.edges[:-1] * 100, x1=self.edges[1:] * 100,
                                    height=self.counts, brush=BAR, pen="w")
        self.addItem(self.bars)
        self.vb.left_clicked.connect(self._on_click)

    def set_values(self, ap: np.ndarray) -> None:
        """Show the AP values of the evaluated queries (:meth:`Evaluation.ap_values`)."""
        which = ap_bin_index(np.asarray(ap, dtype=np.float64), self.edges)
        self.counts = np.bincount(which[which >= 0], minlength=len(self.edges) - 1)
        self.setYRange(0, max(1, int(self.counts.max(initial=0))) * 1.08, padding=0)
        self._redraw()

    def set_selected(self, ap: float | None) -> None:
        """Fill the bin of the selected query's AP (None or nan: none)."""
        self.selected = None if ap is None or not np.isfinite(ap) else self.bin_of(ap)
        self._redraw()

    def set_active(self, ap_range: tuple[float, float] | None) -> None:
        """Outline the bin whose range is ``ap_range`` (None: no AP filter); this emits
        nothing, so the owner can mirror a filter set elsewhere."""
        self.active = None if ap_range is None else (float(ap_range[0]), float(ap_range[1]))
        self._redraw()

    def bin_of(self, ap: float) -> int | None:
        """Return the bin holding AP ``ap`` (a fraction), None outside [0, 1]."""
        i = int(ap_bin_index(ap, self.edges))
        return i if i >= 0 else None

    def bin_range(self, i: int) -> tuple[float, float]:
        """Return bin ``i``'s (low, high) AP as fractions."""
        return float(self.edges[i]), float(self.edges[i + 1])

    def click_bin(self, i: int) -> None:
        """What a click on bar ``i`` does: make it active, or clear it when it is active."""
        low, high = self.bin_range(i)
        if self.active == (low, high):
            self.set_active(None)
            self.range_cleared.emit()
        else:
            self.set_active((low, high))
            self.range_clicked.emit(low, high)

    def _on_click(self, x_percent: float, y: float) -> None:
        i = self.bin_of(x_percent / 100)
        if i is not None and y >= 0:
            self.click_bin(i)

    def _redraw(self) -> None:
        n = len(self.counts)
        brushes = [SELECTED_BAR if i == self.selected else BAR for i in range(n)]
        pens = [pg.mkPen(ACTIVE_BAR, width=3) if self.active == self.bin_range(i)
                else pg.mkPen("w") for i in range(n)]
        self.bars.setOpts(x0=self.edges[:-1] * 100, x1=self.edges[1:] * 100,
                          height=self.counts, brushes=brushes, pens=pens)


class CurvePlot(pg.PlotItem):
    """Curves over k with axis labels and a legend, one per ``series`` entry
    ``(key, legend name, colour, dashed)``; ``series[key]`` is its PlotDataItem."""

    def __init__(self, x_label: str, y_label: str,
                 series: Sequence[tuple[str, str, str, bool]]) -> None:
        super().__init__(enableMenu=False)
        self.setLabel("bottom", x_label)
        self.setLabel("left", y_label)
        self.showGrid(x=True, y=True, alpha=0.25)
        _fixed_view(self)
        self.setYRange(0, 1.02, padding=0)
        self.setXRange(1, DEFAULT_DEPTH, padding=0.02)
        self.addLegend(offset=(-10, 10))
        self.series: dict[str, pg.PlotDataItem] = {}
        for key, name, colour, dashed in series:
            style = Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine
            self.series[key] = self.plot([], [], pen=pg.mkPen(colour, width=2.5, style=style),
                                         name=name, connect="finite")

    def set_curve(self, key: str, ks: np.ndarray, values: np.ndarray) -> None:
        """Show ``values`` over ``ks`` as curve ``key``; an all-nan curve is shown empty."""
        x = np.asarray(ks, dtype=np.float64)
        y = np.asarray(values, dtype=np.float64)
        if not np.isfinite(y).any():
            x, y = np.zeros(0), np.zeros(0)
        self.series[key].setData(x, y)
        if len(x):
            self.setXRange(1, max(2.0, float(x.max())), padding=0.02)


def precision_plot() -> CurvePlot:
    """Return the P@k plot: the mean over evaluated queries (dashed) and the selected query."""
    return CurvePlot("k (results looked at)", "precision at k",
                     [("mean", "mean P@k", MEAN_CURVE, True),
                      ("query", "this query", QUERY_CURVE, False)])


def cmc_plot() -> CurvePlot:
    """Return the CMC plot (mean over evaluated queries)."""
    return CurvePlot("rank k", "CMC: first match within k",
                     [("mean", "mean CMC", CMC_CURVE, False)])


class Charts(pg.GraphicsLayoutWidget):
    """The three charts side by side in one graphics view: ``histogram`` (APHistogram),
    ``precision`` and ``cmc`` (CurvePlot). ``range_clicked`` / ``range_cleared`` are the
    histogram's signals."""

    def __init__(self, depth: int = DEFAULT_DEPTH, bins: int = 10,
                 parent=None) -> None:
        super().__init__(parent=parent)
        self.setBackground("w")
        self.depth = depth
        self.histogram = APHistogram(bins)
        self.precision = precision_plot()
        self.cmc = cmc_plot()
        self.addItem(self.histogram, row=0, col=0)
        self.addItem(self.precision, row=0, col=1)
        self.addItem(self.cmc, row=0, col=2)
        self.range_clicked = self.histogram.range_clicked
        self.range_cleared = self.histogram.range_cleared

    def mousePressEvent(self, ev) -> None:  # noqa: N802 (Qt's name)
        """Let the scene turn the press into a click, then keep it from the parents (the
        charts are the press's end; an ignored press would travel up the window)."""
        super().mousePressEvent(ev)
        ev.accept()

    def mouseReleaseEvent(self, ev) -> None:  # noqa: N802 (Qt's name)
        super().mouseReleaseEvent(ev)
        ev.accept()

    def show_evaluation(self, evaluation: Evaluation) -> None:
        """Show a new evaluation's AP histogram, mean P@k and CMC (the CMC plot says so
        when the protocol has none)."""
        self.histogram.set_values(evaluation.ap_values()[1])
        self.histogram.set_selected(None)
        self.precision.set_curve("mean", *evaluation.precision_curve(self.depth))
        self.precision.set_curve("query", np.zeros(0), np.zeros(0))
        ks, cmc = evaluation.cmc_curve(self.depth)
        self.cmc.set_curve("mean", ks, cmc)
        rule = evaluation.protocol.cmc
        self.cmc.setTitle("no CMC in this protocol" if rule == "none" else
                          "CUHK03 single-gallery-shot, at its cut-offs" if rule == "cuhk03"
                          else None)
        self.cmc.series["mean"].setSymbol("o" if rule == "cuhk03" else None)

    def show_query(self, evaluation: Evaluation, q: int) -> None:
        """Show query ``q``'s AP bin and P@k curve."""
        self.histogram.set_selected(float(evaluation.per_query["AP"][q]))
        self.precision.set_curve("query", *evaluation.query_precision_curve(q, self.depth))
