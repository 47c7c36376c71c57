"""Compare mode's scatter plot: AP under the shown method (x) against AP under the compared
method (y), one point per query evaluated by both, the diagonal drawn (above it: the
compared method does better), the selected query ringed. Clicking a point emits
``query_clicked(query position)``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal

if TYPE_CHECKING:
    from pyqtgraph.GraphicsScene.mouseEvents import MouseClickEvent

from irviewer.gui.theme import MEAN_CURVE, QUERY_CURVE
from irviewer.view import palette
from irviewer.view.compare_view import GAIN_COLOUR, LOSS_COLOUR, TIE_COLOUR

#: A click selects the nearest point within this many pixels.
CLICK_RADIUS = 8


class APScatter(pg.PlotWidget):
    """Per-query AP of two methods, in percent."""

    query_clicked = Signal(int)

    def __init__(self) -> None:
        super().__init__(background=palette.WHITE, enableMenu=False)
        self.showGrid(x=True, y=True, alpha=0.25)
        self.setMouseEnabled(x=False, y=False)
        self.hideButtons()
        self.setRange(xRange=(0, 100), yRange=(0, 100), padding=0.03)
        self.setAspectLocked(True)
        self.addItem(pg.PlotCurveItem([0, 100], [0, 100], pen=pg.mkPen(
            MEAN_CURVE, width=1.5, style=pg.QtCore.Qt.PenStyle.DashLine)))
        self.points = pg.ScatterPlotItem(size=7, pen=pg.mkPen(palette.WHITE, width=0.5))
        self.addItem(self.points)
        self.selected = pg.ScatterPlotItem(size=15, brush=None,
                                           pen=pg.mkPen(QUERY_CURVE, width=2.5))
        self.addItem(self.selected)
        self.positions = np.zeros(0, dtype=np.int64)
        self.x = np.zeros(0)
        self.y = np.zeros(0)
        self.setToolTip("One point per query: AP under the shown method (x) and the compared "
                        "one (y); above the diagonal the compared method does better. "
                        "Click a point to select its query.")
        self.scene().sigMouseClicked.connect(self._on_click)

    def set_points(self, positions: np.ndarray, x: np.ndarray, y: np.ndarray, x_name: str,
                   y_name: str) -> None:
        """Show one point per query position (``x``, ``y`` AP fractions)."""
        self.positions = np.asarray(positions, dtype=np.int64)
        self.x, self.y = 100 * np.asarray(x, dtype=float), 100 * np.asarray(y, dtype=float)
        colours = np.where(self.y > self.x, GAIN_COLOUR,
                           np.where(self.y < self.x, LOSS_COLOUR, TIE_COLOUR))
        self.points.setData(self.x, self.y, brush=[pg.mkBrush(c) for c in colours])
        self.setLabel("bottom", f"AP (%) under {x_name}")
        self.setLabel("left", f"AP (%) under {y_name}")
        self.selected.setData([], [])

    def set_selected(self, q: int | None) -> None:
        """Ring query ``q``'s point (nothing when it has none)."""
        at = np.flatnonzero(self.positions == q) if q is not None else np.empty(0, np.int64)
        if len(at):
            self.selected.setData([self.x[at[0]]], [self.y[at[0]]])
        else:
            self.selected.setData([], [])

    def point_at(self, x: float, y: float, radius: float) -> int | None:
        """Return the query position of the point nearest (``x``, ``y``) in percent, within
        ``radius`` percent, or None."""
        if not len(self.positions):
            return None
        d = np.hypot(self.x - x, self.y - y)
        i = int(np.argmin(d))
        return int(self.positions[i]) if d[i] <= radius else None

    def _on_click(self, event: MouseClickEvent) -> None:
        vb = self.plotItem.vb
        at = vb.mapSceneToView(event.scenePos())
        per_pixel = vb.viewPixelSize()[0]
        q = self.point_at(at.x(), at.y(), CLICK_RADIUS * per_pixel)
        if q is not None:
            self.query_clicked.emit(q)
