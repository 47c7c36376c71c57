"""Compare mode: "Compare with" beside Method. When a method is chosen, the query table gains
its AP and ΔAP (and the better/worse filters), the plots a scatter tab, the summary bar a
line with the paired statistics, and the window the two ranked lists of the selected query
side by side. Numbers come from :mod:`irviewer.view.compare_view` (the core's
:mod:`irviewer.core.paired`); the slow statistics run off the GUI thread."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import numpy as np
from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QComboBox, QLabel, QWidget

from irviewer.core.errors import InputError
from irviewer.core.evaluation import Evaluation
from irviewer.core.paired import PairedComparison, statistics_loaded
from irviewer.gui.compare.scatter import APScatter
from irviewer.gui.compare.strips import CompareStrips
from irviewer.gui.widgets.thumbnails import ThumbnailCache
from irviewer.gui.workers import Worker
from irviewer.opening.opener import Opened
from irviewer.view.compare_view import (
    PairedStatistics,
    compare_shown,
    compare_summary_html,
    depth_clause,
    paired_columns,
    paired_statistics,
    rank_marks,
)
from irviewer.view.result_list import result_list
from irviewer.view.ties_view import compare_tie_clause, delta_tie_tooltip, within_tie_range

NONE = "none"
#: Up to this many paired queries the statistics are computed at once (revisited Oxford's
#: 70: 0.02 s); beyond, in a worker thread, the summary reading "…" until they arrive. The
#: first comparison of a process is computed in the worker too: it imports scipy.stats.
SYNC_MAX_QUERIES = 100
#: Tiles per strip (the strips follow the results' depth up to this).
STRIP_DEPTH = 50


class Shown(Protocol):
    """What compare mode takes from the inspector, and the places it puts its widgets."""

    opened: Opened | None
    evaluation: Evaluation | None
    current: int | None

    @property
    def depth(self) -> int: ...
    def choice(self) -> tuple[str, str, str | None, str | None]: ...
    def select(self, q: int) -> None: ...
    def set_compared(self, name: str, other_ap: np.ndarray | None,
                     delta: np.ndarray | None) -> None: ...
    def set_compared_ties(self, explained: np.ndarray | None,
                          tips: dict[int, str] | None = None) -> None: ...
    def add_beside_method(self, label: str, widget: QWidget) -> None: ...
    def add_summary_line(self, widget: QWidget) -> None: ...
    def add_beside_results(self, widget: QWidget) -> None: ...


class Tabs(Protocol):
    """What compare mode takes from the plots: a tab of its own in the overview."""

    def add_tab(self, widget: QWidget, title: str) -> int: ...
    def set_tab_shown(self, index: int, shown: bool, current: bool = False) -> None: ...


def related(opened: Opened, shown: str, derived: bool | None = None) -> list[str]:
    """Return the other methods of ``shown``'s file, in the Method list's order: its plain
    method and the methods derived from it (``derived`` True: only derived ones)."""
    if shown not in opened.methods:
        return []
    return [n for n in opened.related(shown)
            if derived is None or (opened.methods[n].made.derivation is not None) == derived]


class CompareMode(QObject):
    """Owns the "Compare with" box, the comparison line, the scatter tab and the strips;
    the window calls :meth:`methods_changed` when data opens, :meth:`rescore` after the
    inspector re-scores and :meth:`show_query` when it shows a query."""

    def __init__(self, parent: QWidget, shown: Shown, plots: Tabs,
                 cache: ThumbnailCache) -> None:
        super().__init__(parent)
        self.shown, self.plots = shown, plots
        self.box = QComboBox()
        self.box.addItem(NONE)
        self.box.setEnabled(False)
        self.box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.box.setToolTip("Compare the shown method (the baseline) with another, query by "
                            "query: ΔAP = AP under it − AP under the shown method")
        shown.add_beside_method("Compare with:", self.box)
        self.line = QLabel()
        self.line.setTextFormat(Qt.TextFormat.RichText)
        self.line.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.line.setWordWrap(True)
        self.line.setVisible(False)
        shown.add_summary_line(self.line)
        self.tie_clause = ""  # what the order of tied scores could make of the differences
        self.scatter = APScatter()
        self.scatter_tab = plots.add_tab(self.scatter, "AP vs AP")
        self.scatter.query_clicked.connect(shown.select)
        self.strips = CompareStrips(cache)
        self.strips.setVisible(False)
        shown.add_beside_results(self.strips)
        self._offered_for = ""
        self.other: Evaluation | None = None
        self.base: Evaluation | None = None  # the shown method as compared (at the depth)
        self.other_own: Evaluation | None = None  # the compared method's own evaluation
        self.depth_clause = ""
        self.comparison: PairedComparison | None = None
        self.statistics: PairedStatistics | None = None
        # One at a time (they cannot stop half-way); a newer comparison makes the older
        # statistics stale, and those not started yet never start.
        self.worker = Worker(self, threads=1)
        self.worker.done.connect(self._arrived)
        self.worker.failed.connect(self._not_computed)
        self.box.currentIndexChanged.connect(lambda _i: self.rescore(from_box=True))

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

    def compared_evaluation(self) -> tuple[str, Evaluation] | None:
        """Return (the compared method's name, its own evaluation: the numbers eval reports
        for it), or None."""
        name = self.compared()
        if self.comparison is None or self.other_own is None or name is None:
            return None
        return name, self.other_own

    def compared_pair(self) -> tuple[Evaluation, Evaluation] | None:
        """Return the shown and the compared method as compared (at their common depth:
        :meth:`Opened.paired`), or None."""
        if self.comparison is None or self.base is None or self.other is None:
            return None
        return self.base, self.other

    def methods_changed(self, *_args: object) -> None:
        """The open data's methods changed (a re-ranked one was added): offer them (the one
        chosen stays when it still is)."""
        self._offer()
        self.rescore(from_box=True)

    def data_opened(self) -> None:
        """Data was opened: offer its methods (the one chosen stays when it still is). Data
        opened with re-ranking SPECs (``irviewer ... --rerank SPEC``) and nothing compared:
        the shown method is compared with its first re-ranked version, before ↔ after."""
        self._offer()
        opened = self.shown.opened
        if opened is not None and (opened.request.rerank or opened.request.ann
                                   or opened.request.engine) and self.compared() is None:
            after = next(iter(related(opened, self.shown.choice()[0], derived=True)), None)
            if after is not None:
                self.box.blockSignals(True)
                self.box.setCurrentIndex(self.box.findText(after))
                self.box.blockSignals(False)
        self.rescore(from_box=True)

    def _offer(self) -> None:
        """Fill the box: "none", then the methods of the shown method's file (its plain one
        when a re-ranked one is shown, its re-ranked ones when the plain one is), then the
        others in the Method list's order."""
        opened = self.shown.opened
        shown = self.shown.choice()[0]
        names = list(opened.methods) if opened is not None else []
        near = related(opened, shown) if opened is not None else []
        keep = self.compared()
        self.box.blockSignals(True)
        self.box.clear()
        self.box.addItems([NONE, *near, *(n for n in names if n not in near)])
        self.box.setCurrentIndex(max(0, self.box.findText(keep)) if keep else 0)
        self.box.setEnabled(len(names) > 1)
        self.box.blockSignals(False)
        self._offered_for = shown

    # -- what is shown ---------------------------------------------------------------------
    def rescore(self, from_box: bool = False) -> None:
        """Compare the shown evaluation with the chosen method (or leave compare mode)."""
        if self.shown.choice()[0] != self._offered_for:  # another method shown
            self._offer()
        w, other = self.shown, self.compared()
        self.worker.cancel()  # statistics still running belong to another comparison
        if (w.opened is None or w.evaluation is None or other is None
                or other not in w.opened.methods):
            self._off()
            return
        method, protocol, ap, self_match = w.choice()
        paired = w.opened.paired(method, other, protocol, ap=ap, self_match=self_match)
        self.other, self.base, self.other_own = paired.other, paired.base, paired.other_own
        self.depth_clause = depth_clause(method, paired)
        try:
            c = compare_shown(method, paired.base, other, self.other)
        except InputError as e:
            self._off()
            self.line.setText(f"Compare with {other}: {e}")
            self.line.setVisible(True)
            return
        self.comparison, self.statistics = c, None
        other_ap, delta = paired_columns(c, paired.base.dataset)
        w.set_compared(other, other_ap, delta)
        self._mark_ties(paired.base, self.other)
        both = np.flatnonzero(~np.isnan(delta))
        self.scatter.set_points(both, paired.base.per_query["AP"][both], other_ap[both],
                                method, other)
        self.plots.set_tab_shown(self.scatter_tab, True, current=from_box)
        self.line.setVisible(True)
        if c.n <= SYNC_MAX_QUERIES and statistics_loaded():
            self.statistics = paired_statistics(c)
        else:
            self.worker.run(lambda: paired_statistics(c), "not enough memory for the "
                            "paired statistics; close other programs")
        self._show_line()
        self.strips.setVisible(True)
        if from_box and w.current is not None:  # else the window shows the query next
            self.show_query(w.current)

    def show_query(self, q: int) -> None:
        """Show query ``q``'s point and both ranked lists (compare mode only)."""
        if self.comparison is None or self.other is None or self.base is None:
            return
        self.scatter.set_selected(q)
        shown, other = self.base, self.other
        depth = min(self.shown.depth, STRIP_DEPTH)
        here = result_list(shown, q, depth, False).tiles
        there = result_list(other, q, depth, False).tiles
        c = self.comparison
        self.strips.show_lists(
            (self._title(c.baseline, shown, q), self._title(c.method, other, q)),
            (here, rank_marks(here, other, q, c.method)),
            (there, rank_marks(there, shown, q, c.baseline, compared=True)))

    @staticmethod
    def _title(name: str, ev: Evaluation, q: int) -> str:
        ap = float(ev.per_query["AP"][q])
        return f"<b>{name}</b><br>AP " + ("—" if np.isnan(ap) else f"{100 * ap:.1f}")

    def wait(self) -> None:
        """Block until running statistics end (closing the window, tests)."""
        self.worker.finish()

    def visible_thumbnails(self) -> list[tuple[str, Path | None]]:
        """Return the (name, path) of every tile the strips show (for --screenshot)."""
        if not self.strips.isVisible():
            return []
        return [(t.name, t.path) for t in self.strips.tiles()]

    def _arrived(self, statistics: PairedStatistics) -> None:
        if self.comparison is not None:
            self.statistics = statistics
            self._show_line()

    def _mark_ties(self, shown: Evaluation, other: Evaluation) -> None:
        """Mark the differences the order of tied scores alone could make (grey ΔAP, a
        clause in the summary line)."""
        explained = within_tie_range(shown, other, shown.dataset)
        where = {q.name: i for i, q in enumerate(other.dataset.queries)}
        tips = {int(q): delta_tie_tooltip(shown, other, int(q),
                                          where[shown.dataset.queries[q].name])
                for q in np.flatnonzero(explained)}
        self.shown.set_compared_ties(explained, tips)
        assert self.comparison is not None
        self.tie_clause = compare_tie_clause(explained, self.comparison.n,
                                             self.comparison.mean_delta, shown, other)

    def _not_computed(self, message: str) -> None:
        self.line.setText(f"{self.line.text()} (the paired statistics: {message})")

    def _show_line(self) -> None:
        assert self.comparison is not None
        clause = "".join(f" &nbsp;·&nbsp; {c}" for c in (self.depth_clause, self.tie_clause)
                         if c)
        self.line.setText(compare_summary_html(self.comparison, self.statistics) + clause)

    def _off(self) -> None:
        self.comparison = self.other = self.base = self.other_own = self.statistics = None
        self.depth_clause = ""
        self.shown.set_compared("", None, None)
        self.line.setVisible(False)
        self.plots.set_tab_shown(self.scatter_tab, False)
        self.strips.setVisible(False)
