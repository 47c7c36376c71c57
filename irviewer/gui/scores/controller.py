"""The Scores tab's controller: counts the score of every pair of the shown evaluation in a
worker when the tab is first looked at (as long as ranking again: never before it is asked
for), the selected query's pairs from its score row at once, and keeps the threshold where
the user put it. The numbers come from :mod:`irviewer.core.score_distribution` through
:mod:`irviewer.view.score_view`."""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QWidget

from irviewer.core.errors import InputError, window_text
from irviewer.core.evaluation import Evaluation
from irviewer.core.score_distribution import GRID_BINS, PairScores, query_pair_scores
from irviewer.gui.scores.panel import ScoresPanel
from irviewer.gui.workers import Scorer
from irviewer.view.score_view import (
    THRESHOLD_STEP,
    histograms,
    occupied_steps,
    pairs_html,
    score_of_step,
    step_of_score,
    tar_html,
    threshold_html,
)

#: The threshold first shown: score 0.5.
FIRST_STEP = (GRID_BINS // 2 + GRID_BINS // 4) // THRESHOLD_STEP


class Shown(Protocol):
    """What the Scores tab takes from the inspector."""

    evaluation: Evaluation | None
    current: int | None


class Tabs(Protocol):
    """What the Scores tab takes from the plots: a tab of its own in the overview."""

    def add_tab(self, widget: QWidget, title: str) -> int: ...
    def set_tab_shown(self, index: int, shown: bool, current: bool = False) -> None: ...


class ScoresUI(QObject):
    """Owns the Scores tab; the window calls :meth:`evaluation_shown` and :meth:`query_shown`
    (work is done only while the tab is in front, or when it comes to the front)."""

    def __init__(self, parent: QWidget, shown: Shown, plots: Tabs) -> None:
        super().__init__(parent)
        self.shown_data, self.plots = shown, plots
        self.panel = ScoresPanel()
        self.tab = plots.add_tab(self.panel, "Scores")
        plots.set_tab_shown(self.tab, True)
        self.worker = Scorer(self)
        self.worker.done.connect(self._whole_ready)
        self.worker.failed.connect(self._failed)
        self.worker.progress.connect(
            lambda _stage, done, total: self.panel.set_status(
                f"Counting the score of every pair… {done} of {total} blocks of queries"))
        self.whole: PairScores | None = None
        self.query: PairScores | None = None
        self.counted_for: Evaluation | None = None  # the evaluation whole belongs to
        self.query_for: tuple[Evaluation, int] | None = None
        self.step = FIRST_STEP
        self.panel.step_moved.connect(self.set_step)
        self.panel.shown.connect(self.refresh)

    def show_tab(self) -> None:
        """Bring the Scores tab to the front (its counts start if not done yet)."""
        self.plots.set_tab_shown(self.tab, True, current=True)

    def evaluation_shown(self, *_args: object) -> None:
        """Another evaluation is shown (method, protocol, convention, a label corrected):
        the counts of the last one no longer apply; counted again when looked at."""
        self.worker.cancel()
        self.whole = None
        self.counted_for = None
        self.refresh()

    def query_shown(self, _q: int) -> None:
        """Another query is shown: its pairs are counted when the tab is looked at."""
        self.refresh()

    def refresh(self, sync: bool = False) -> None:
        """Count what the tab needs and is not counted yet (only while it is visible)."""
        if not self.panel.isVisible():
            return
        ev, q = self.shown_data.evaluation, self.shown_data.current
        if ev is None:
            return
        if self.counted_for is not ev and not self.worker.running:
            self.counted_for = ev
            self.panel.set_status("Counting the score of every pair…")
            self.worker.count(ev, sync=sync)
        if q is not None and (self.query_for is None or self.query_for[0] is not ev
                              or self.query_for[1] != q):
            self.query_for = (ev, q)
            try:
                self.query = query_pair_scores(ev, q)
            except InputError as e:
                self.query = None
                self.panel.set_status(window_text(e))
        self._draw()

    def set_step(self, step: int) -> None:
        """Move the threshold to ``step`` (of THRESHOLD_STEP grid bins)."""
        self.step = step
        self._draw()

    def wait(self) -> None:
        """Block until counting ends (closing the window, tests)."""
        self.worker.wait()

    def _whole_ready(self, pairs: PairScores) -> None:
        self.whole = pairs
        self.panel.set_status("")
        self._draw()

    def _failed(self, message: object) -> None:
        self.whole = None
        self.panel.set_status(window_text(message))
        self._draw()

    def _draw(self) -> None:
        lo, hi = occupied_steps(self.whole, self.query)
        self.step = max(lo, min(hi, self.step))
        self.panel.set_steps(lo, hi, score_of_step, step_of_score)
        name = self.shown_data.evaluation.dataset.queries[self.shown_data.current].name \
            if self.shown_data.evaluation is not None and self.shown_data.current is not None \
            else "this query"
        self.panel.set_step(self.step, threshold_html(self.step, self.query, self.whole,
                                                      name.rsplit("/", 1)[-1]))
        self.panel.set_histograms(None if self.whole is None else histograms(self.whole),
                                  None if self.query is None else histograms(self.query))
        self.panel.set_summary("" if self.whole is None else tar_html(self.whole),
                               "" if self.whole is None else pairs_html(self.whole))
