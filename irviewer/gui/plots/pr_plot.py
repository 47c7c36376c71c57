"""The precision-recall plot: the selected query's curve over the mean interpolated curve.
Plot items are built once and updated with setData."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor

from irviewer.gui.theme import MEAN_CURVE, QUERY_CURVE
from irviewer.view import palette
from irviewer.view.mean_pr import MEAN_WORDS


#: The plot's legend, shown above it (inside, it would cover a curve wherever it sat:
#: a low-AP query's curve runs along the bottom, a good one along the top).
def pr_legend(curve: str = MEAN_WORDS) -> str:
    """Return the legend of the query's curve over the dataset's ``curve``."""
    return (f'<span style="color:{QUERY_CURVE}; font-weight:bold">━━</span> this query '
            f'(shaded: its AP) &nbsp; <span style="color:{MEAN_CURVE}; font-weight:bold">'
            f"╍╍</span> {curve}")


PR_LEGEND = pr_legend()

pg.setConfigOption("foreground", palette.PLOT_INK)  # axis text readable on the white plots


def _query_fill() -> QColor:
    """Return the colour of the area under the query's curve: its line's, translucent."""
    fill = QColor(palette.SELECTED)
    fill.setAlpha(palette.SELECTED_FILL_ALPHA)
    return fill


class PRPlot(pg.PlotWidget):
    """Query PR points over the mean curve, with the AP's integration shaded."""

    def __init__(self) -> None:
        super().__init__(background=palette.WHITE)
        self.setLabel("bottom", "recall")
        self.setLabel("left", "precision")
        self.setXRange(0, 1, padding=0.02)
        self.setYRange(0, 1.02, padding=0)
        self.showGrid(x=True, y=True, alpha=0.25)
        self.mean_curve = self.plot([], [], pen=pg.mkPen(MEAN_CURVE, width=2,
                                                         style=pg.QtCore.Qt.PenStyle.DashLine),
                                    name="mean (interpolated)")
        self.query_curve = self.plot([], [], pen=pg.mkPen(QUERY_CURVE, width=2.5),
                                     fillLevel=0, brush=pg.mkBrush(_query_fill()),
                                     name="this query")
        self.query_points = self.plot([], [], pen=None, symbol="o", symbolSize=6,
                                      symbolBrush=QUERY_CURVE)

    def set_curves(self, recall: np.ndarray, precision: np.ndarray, area_x: np.ndarray,
                   area_y: np.ndarray, mean_levels: np.ndarray,
                   mean_precision: np.ndarray) -> None:
        """Show one query's PR points, the shaded curve whose area is its AP (from the core,
        under the current AP convention), and the mean interpolated curve."""
        self.mean_curve.setData(mean_levels, np.nan_to_num(mean_precision))
        self.query_points.setData(recall, precision)
        self.query_curve.setData(area_x, area_y)
