"""The Scores tab's widget: one score axis with the selected query's and all queries'
positive and negative histograms (fractions of each class, so a few positives and millions
of negatives share the axis), a threshold line that can be dragged and a slider under it,
and the lines the view model writes (:mod:`irviewer.view.score_view`)."""

from __future__ import annotations

from collections.abc import Callable

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QLabel, QSlider, QVBoxLayout, QWidget

from irviewer.view import palette
from irviewer.view.score_view import Histograms

POSITIVE_COLOUR, NEGATIVE_COLOUR = palette.RELEVANT, palette.NOT_RELEVANT
THRESHOLD_COLOUR = palette.SELECTED  # the blue of the selected query


class ScoresPanel(QWidget):
    """The plot, the slider and the lines. ``step_moved(step)`` when the user moves the
    threshold (slider or line); ``shown()`` when the tab comes to the front."""

    step_moved = Signal(int)
    shown = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.plot = pg.PlotWidget(background=palette.WHITE, enableMenu=False)
        self.plot.setLabel("bottom", "score")
        self.plot.setLabel("left", "fraction of pairs")
        self.plot.showGrid(x=True, y=True, alpha=0.25)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.hideButtons()
        for side in ("bottom", "left"):  # scores and fractions, never "x0.001"
            self.plot.getAxis(side).enableAutoSIPrefix(False)
        dash = Qt.PenStyle.DashLine

        def curve(colour: str, name: str, style: Qt.PenStyle = Qt.PenStyle.SolidLine,
                  width: float = 1.5, fill: bool = False) -> pg.PlotDataItem:
            item = pg.PlotDataItem([0, 1], [0], stepMode="center", name=name,
                                   pen=pg.mkPen(colour, width=width, style=style))
            if fill:
                item.setFillLevel(0)
                item.setBrush(pg.mkBrush(colour + "40"))
            self.plot.addItem(item)
            return item

        self.set_positive = curve(POSITIVE_COLOUR, "positives, all queries", fill=True)
        self.set_negative = curve(NEGATIVE_COLOUR, "negatives, all queries", fill=True)
        self.query_positive = curve(POSITIVE_COLOUR, "positives, this query", dash, 2.5)
        self.query_negative = curve(NEGATIVE_COLOUR, "negatives, this query", dash, 2.5)
        self.line = pg.InfiniteLine(angle=90, movable=True,
                                    pen=pg.mkPen(THRESHOLD_COLOUR, width=2))
        self.line.setToolTip("Drag the threshold: pairs scoring at least it are accepted")
        self.plot.addItem(self.line)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setToolTip("The threshold: a pair whose score is at least it is "
                               "accepted as the same")
        self.legend = QLabel(
            f'<span style="color:{POSITIVE_COLOUR}"><b>━ positives</b></span> &nbsp; '
            f'<span style="color:{NEGATIVE_COLOUR}"><b>━ negatives</b></span> &nbsp; '
            "filled: all queries, dashed: this query &nbsp; "
            f'<span style="color:{THRESHOLD_COLOUR}"><b>│ threshold</b></span>')
        self.threshold = QLabel()
        self.tar = QLabel()
        self.pairs = QLabel()
        self.status = QLabel()
        for label in (self.legend, self.threshold, self.tar, self.pairs, self.status):
            label.setWordWrap(True)
            label.setTextFormat(Qt.TextFormat.RichText)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.setSpacing(2)
        layout.addWidget(self.legend)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.slider)
        for label in (self.threshold, self.tar, self.pairs, self.status):
            layout.addWidget(label)
        self.score_of: Callable[[float], float] = float
        self.step_of: Callable[[float], int] = round
        self.slider.valueChanged.connect(self.step_moved)
        self.line.sigPositionChangeFinished.connect(
            lambda line: self.step_moved.emit(self.step_of(line.value())))

    def set_steps(self, lo: int, hi: int, score_of: Callable[[float], float],
                  step_of: Callable[[float], int]) -> None:
        """Let the slider run over threshold steps lo..hi, step s at score ``score_of(s)``
        (a dragged line goes to step ``step_of(score)``)."""
        self.score_of, self.step_of = score_of, step_of
        self.slider.blockSignals(True)
        self.slider.setRange(lo, hi)
        self.slider.blockSignals(False)
        self.plot.setXRange(score_of(lo), score_of(hi), padding=0.02)

    def set_step(self, step: int, html: str) -> None:
        """Show threshold ``step`` on the slider and the line, and its lines."""
        self.slider.blockSignals(True)
        self.slider.setValue(step)
        self.slider.blockSignals(False)
        self.line.setValue(self.score_of(step))
        self.threshold.setText(html)

    def set_status(self, text: str) -> None:
        """Say what is being counted, or why nothing can be ("" when all is shown)."""
        self.status.setText(text)

    def set_summary(self, tar: str, pairs: str) -> None:
        """Show all queries' TAR at FAR line and what their pairs are ("": not counted)."""
        self.tar.setText(tar)
        self.pairs.setText(pairs)

    def set_histograms(self, whole: Histograms | None, query: Histograms | None) -> None:
        """Draw the set's and the query's histograms (None: cleared)."""
        for h, pos, neg in ((whole, self.set_positive, self.set_negative),
                            (query, self.query_positive, self.query_negative)):
            if h is None:
                pos.setData([0, 1], [0])
                neg.setData([0, 1], [0])
                continue
            pos.setData(h.edges, h.positives)
            neg.setData(h.edges, h.negatives)
        tops = [float(max(h.positives.max(initial=0), h.negatives.max(initial=0)))
                for h in (whole, query) if h is not None]
        self.plot.setYRange(0, max([*tops, 0.01]) * 1.08, padding=0)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802
        super().showEvent(event)
        self.shown.emit()
