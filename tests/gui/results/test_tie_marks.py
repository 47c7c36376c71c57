"""The window marks what tied scores make uncertain: the AP of a query whose ties' order
moves it (≈ and a hover sentence with its range), its header's range, the summary's mAP
range; in compare mode, the ΔAPs the order of tied scores alone could make (grey, ≈) and the
summary line's count. Binary descriptors (12 signs) tie by the hundreds."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt

from irviewer.gui.main_window import MainWindow
from irviewer.gui.results.query_model import DELTA
from irviewer.opening.request import OpenRequest, demo_paths
from irviewer.view.ties_view import TIE_MARK, within_tie_range
from tests.core.helpers import binary_descriptors


def tied_window(qtbot, tmp_path) -> MainWindow:
    manifest, strong = demo_paths()
    binary_descriptors(strong, tmp_path / "a.npz", 0)
    binary_descriptors(strong, tmp_path / "b.npz", 12)
    w = MainWindow(top_k=20)
    qtbot.addWidget(w)
    w.show()
    w.open_request(OpenRequest(manifest, (tmp_path / "a.npz", tmp_path / "b.npz")), sync=True)
    return w


def cell(w: MainWindow, q: int, column: int, role=Qt.ItemDataRole.DisplayRole):
    model = w.inspector.queries.model
    return model.data(model.index(model.row_of(q), column), role)


def test_a_query_whose_ap_depends_on_ties_is_marked(qtbot, tmp_path):
    w = tied_window(qtbot, tmp_path)
    ev = w.inspector.evaluation
    tied = ev.ties.tied
    assert tied.any()
    for q in range(ev.dataset.n_queries):
        text = cell(w, q, 1)
        assert text.startswith(TIE_MARK) == bool(tied[q]), (q, text)
    q = int(np.flatnonzero(tied)[0])
    tip = cell(w, q, 1, Qt.ItemDataRole.ToolTipRole)
    worst, best = ev.ties.per_query["AP_worst"][q], ev.ties.per_query["AP_best"][q]
    assert f"{100 * worst:.1f} with the positives last" in tip
    assert f"{100 * best:.1f} with them first" in tip
    w.inspector.select(q)
    header = w.inspector.results.query_metrics.text()
    assert f"{TIE_MARK} {100 * worst:.1f}–{100 * best:.1f}" in header
    s = ev.ties.summary
    assert f"mAP {100 * s['mAP_worst']:.2f}–{100 * s['mAP_best']:.2f}" in \
        w.inspector.bar.summary.text()


def test_compare_mode_greys_the_differences_ties_alone_can_make(qtbot, tmp_path):
    w = tied_window(qtbot, tmp_path)
    w.compare_mode.set_compared("b.npz")
    w.compare_mode.wait()
    qtbot.waitUntil(lambda: w.compare_mode.comparison is not None)
    shown, other = w.inspector.evaluation, w.compare_mode.other
    explained = within_tie_range(shown, other, shown.dataset)
    assert explained.any() and not explained.all()
    for q in range(shown.dataset.n_queries):
        text = cell(w, q, DELTA)
        assert text.startswith(TIE_MARK) == bool(explained[q]), (q, text)
    q = int(np.flatnonzero(explained)[0])
    assert cell(w, q, DELTA, Qt.ItemDataRole.ToolTipRole).startswith("Within the tie range")
    assert (f"{int(explained.sum())} of {w.compare_mode.comparison.n} differences lie within "
            "the tie range") in w.compare_mode.line.text()
    w.compare_mode.set_compared(None)
    assert not cell(w, q, DELTA).startswith(TIE_MARK)


def test_continuous_descriptors_mark_nothing(qtbot):
    manifest, strong = demo_paths()
    w = MainWindow(top_k=20)
    qtbot.addWidget(w)
    w.show()
    w.open_request(OpenRequest(manifest, (strong,)), sync=True)
    ev = w.inspector.evaluation
    assert not any(cell(w, q, 1).startswith(TIE_MARK) for q in range(ev.dataset.n_queries))
    assert "ties:" not in w.inspector.bar.summary.text()
