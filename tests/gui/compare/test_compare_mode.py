"""Compare mode in the window: "Compare with" adds the other method's AP and ΔAP (the core's
per-query difference), ΔAP sorts largest loss first in one click, the better/worse filters,
a scatter click selects its query, the summary carries PairedComparison's numbers (computed
in a worker for many queries, stale results dropped), the strips' rank marks."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt

from irviewer.core.paired import compare_evaluations
from irviewer.gui.compare import controller as compare_mode
from irviewer.gui.main_window import MainWindow
from irviewer.gui.results.query_model import DELTA, OTHER_AP
from irviewer.opening.request import demo_request
from tests.figure_case import make_case


@pytest.fixture(autouse=True)
def statistics_library():
    """scipy.stats imported, as after a first comparison: small comparisons are then
    computed at once (the first one goes to the worker: see its own test)."""
    import scipy.stats  # noqa: F401


@pytest.fixture
def window(qtbot):
    w = MainWindow(top_k=20)
    qtbot.addWidget(w)
    w.resize(1500, 900)
    w.show()
    w.open_request(demo_request(), sync=True)
    return w


def core(w: MainWindow):
    ev_b = w.opened.evaluation("weak.npz", w.bar.choice()[1])
    return compare_evaluations("strong.npz", w.evaluation, "weak.npz", ev_b, "AP")


def column(w: MainWindow, col: int) -> list[str]:
    proxy = w.queries.proxy
    return [proxy.index(r, col).data() for r in range(proxy.rowCount())]


def test_compare_with_adds_the_columns_with_the_cores_values(window):
    assert window.queries.table.isColumnHidden(DELTA)
    assert not window.compare_mode.strips.isVisible()
    window.compare_mode.box.setCurrentText("weak.npz")
    assert not window.queries.table.isColumnHidden(DELTA)
    assert not window.queries.table.isColumnHidden(OTHER_AP)
    c = core(window)
    model = window.queries.model
    by_name = dict(zip(c.queries, c.deltas, strict=True))
    names = [q.name for q in window.opened.dataset.queries]
    for row in range(model.rowCount()):
        q = model.query_of(row)
        assert model.index(row, DELTA).data() == f"{100 * by_name[names[q]]:+.1f}"
    np.testing.assert_array_equal(model.column_values(DELTA), c.deltas)  # all 22 evaluated
    np.testing.assert_array_equal(model.column_values(OTHER_AP), c.method_values)
    assert model.headerData(OTHER_AP, Qt.Orientation.Horizontal) == "AP weak.npz"
    header = window.queries.table.horizontalHeader()
    text_width = window.queries.table.fontMetrics().horizontalAdvance("AP weak.npz")
    assert header.sectionSize(OTHER_AP) >= text_width + 12  # the whole name, with the arrow
    window.compare_mode.box.setCurrentIndex(0)  # none: the columns go
    assert window.queries.table.isColumnHidden(DELTA)
    assert not window.compare_mode.line.isVisible()


def test_one_click_on_delta_puts_the_largest_loss_first(window, qtbot):
    window.compare_mode.set_compared("weak.npz")
    header = window.queries.table.horizontalHeader()
    x = header.sectionViewportPosition(DELTA) + header.sectionSize(DELTA) // 2
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, 5))
    c = core(window)
    model = window.queries.model
    first = model.query_of(0)
    assert window.opened.dataset.queries[first].name == c.queries[int(np.argmin(c.deltas))]
    shown = [float(v) for v in column(window, DELTA)]
    assert shown == sorted(shown) and shown[0] < 0


def test_better_and_worse_filters(window):
    window.compare_mode.set_compared("weak.npz")
    c = core(window)
    panel = window.queries
    panel.better.setChecked(True)
    assert panel.proxy.rowCount() == c.wins == 3
    assert all(float(v) > 0 for v in column(window, DELTA))
    panel.worse.setChecked(True)  # one direction at a time
    assert not panel.better.isChecked()
    assert panel.proxy.rowCount() == c.losses == 19
    assert all(float(v) < 0 for v in column(window, DELTA))
    panel.worse.setChecked(False)
    assert panel.proxy.rowCount() == 22


def test_clicking_a_scatter_point_selects_its_query(window, qtbot):
    window.compare_mode.set_compared("weak.npz")
    scatter = window.compare_mode.scatter
    assert window.plots.overview.currentWidget() is scatter
    qtbot.wait(50)
    target = next(q for q in scatter.positions if q != window.current)
    i = int(np.flatnonzero(scatter.positions == target)[0])
    scene = scatter.plotItem.vb.mapViewToScene(QPointF(scatter.x[i], scatter.y[i]))
    at = scatter.mapFromScene(scene)
    qtbot.mouseClick(scatter.viewport(), Qt.MouseButton.LeftButton, pos=at)
    assert window.current == target
    assert window.queries.current_query() == target
    ring = scatter.selected.getData()
    assert (ring[0][0], ring[1][0]) == (scatter.x[i], scatter.y[i])


def test_summary_shows_the_paired_comparison(window):
    window.compare_mode.set_compared("weak.npz")
    c = core(window)
    text = window.compare_mode.line.text()
    lo, hi = c.ci95
    assert f"ΔmAP {100 * c.mean_delta:+.2f}" in text
    assert f"[{100 * lo:+.2f}, {100 * hi:+.2f}]" in text
    assert f"<b>{c.wins}</b> better, <b>{c.losses}</b> worse, <b>{c.ties}</b> tied" in text
    t_p, r_p = c.paired_t.p_value, c.randomization.p_value
    for name, p in (("paired t", t_p), ("randomization", r_p)):
        assert (f"{name} p &lt; 0.0001" if p < 1e-4 else f"{name} p = {p:.4f}") in text


def test_statistics_arrive_from_a_worker_and_stale_ones_are_dropped(window, qtbot,
                                                                      monkeypatch):
    monkeypatch.setattr(compare_mode, "SYNC_MAX_QUERIES", 0)
    mode = window.compare_mode
    mode.set_compared("weak.npz")
    stale = mode.worker.generation
    assert "95 % CI …" in mode.line.text()
    window.bar.ap_box.setCurrentIndex(2)  # trapezoid AP: another comparison
    assert mode.worker.generation > stale and "95 % CI …" in mode.line.text()
    mode.wait()
    qtbot.waitUntil(lambda: mode.statistics is not None)
    ev_b = window.opened.evaluation("weak.npz", window.bar.choice()[1], ap="trapezoid")
    c = compare_evaluations("strong.npz", window.evaluation, "weak.npz", ev_b, "AP")
    assert mode.statistics.ci95 == c.ci95
    assert mode.statistics.randomization_p == c.randomization.p_value
    mode.worker._relay.done.emit(stale, None)  # a late result of the first one: ignored
    assert mode.statistics is not None and "…" not in mode.line.text()


def test_the_first_comparison_is_computed_off_the_gui_thread(window, qtbot, monkeypatch):
    # importing scipy.stats takes seconds from a cold disk: a small comparison waits for
    # it in the worker, not in the GUI thread
    monkeypatch.setattr(compare_mode, "statistics_loaded", lambda: False)
    mode = window.compare_mode
    mode.set_compared("weak.npz")
    assert mode.statistics is None and "95 % CI …" in mode.line.text()
    mode.wait()
    qtbot.waitUntil(lambda: mode.statistics is not None)
    assert mode.statistics.ci95 == core(window).ci95
    monkeypatch.undo()
    window.bar.ap_box.setCurrentIndex(2)  # another comparison, the library loaded: at once
    assert mode.statistics is not None and "…" not in mode.line.text()


def test_strips_mark_each_tile_with_its_move_between_the_methods(qtbot, tmp_path):
    manifest = make_case(tmp_path)
    w = MainWindow(top_k=10)
    qtbot.addWidget(w)
    w.show()
    w.open_paths(manifest, tmp_path / "first.npz", tmp_path / "second.npz", sync=True)
    w.compare_mode.set_compared("second.npz")
    w.select_query("qa")
    strips = w.compare_mode.strips
    assert strips.isVisible()
    # by hand (tests/figure_case.py): first ranks a1, c1, a2, b1, c2; second c1, a1, a2, ...
    assert [t.name for t in strips.left.tiles] == ["a1", "c1", "a2", "b1", "c2"]
    # second lifts c1 from 2nd to 1st and drops a1 from 1st to 2nd: the same move in both
    assert [m.text for m in strips.left.marks] == ["↓1", "↑1", "=", "=", "="]
    assert [t.name for t in strips.right.tiles][:2] == ["c1", "a1"]
    assert [m.text for m in strips.right.marks][:3] == ["↑1", "↓1", "="]
    assert [m.other_rank for m in strips.right.marks][:3] == [2, 1, 3]
    assert "AP 83.3" in strips.left_title.text() and "AP 58.3" in strips.right_title.text()


def test_compare_mode_gives_the_titles_room_to_delta_and_gives_it_back(window):
    table = window.queries.table
    assert not table.isColumnHidden(5)  # the demo's titles
    window.compare_mode.set_compared("weak.npz")
    assert table.isColumnHidden(5) and not table.isColumnHidden(DELTA)
    window.compare_mode.set_compared(None)
    assert not table.isColumnHidden(5) and table.isColumnHidden(DELTA)


def test_a_rescore_outside_compare_mode_does_not_refilter_the_table(window, monkeypatch):
    """Every correction re-scores; with compare mode off that must not refilter every row
    (15 ms on 20,000 queries), while leaving compare mode still clears its columns."""
    calls = []
    real = window.queries.proxy.refresh
    monkeypatch.setattr(window.queries.proxy, "refresh", lambda: (calls.append(1), real()))
    window.compare_mode.rescore()
    assert calls == []
    window.compare_mode.box.setCurrentText("weak.npz")
    calls.clear()
    window.compare_mode.box.setCurrentIndex(0)
    assert calls and window.queries.model.compared_with == ""
    assert np.isnan(window.queries.model.column_values(DELTA)).all()


def test_the_compared_columns_header_names_a_long_method_whole(window):
    name = "paintings/strong.npz + k-reciprocal:k1=20,k2=6,lambda=0.3"
    n = window.opened.dataset.n_queries
    window.queries.set_compared(name, np.zeros(n), np.zeros(n))
    model, table = window.queries.model, window.queries.table
    text = model.headerData(OTHER_AP, Qt.Orientation.Horizontal)
    assert text == "AP paintings/strong.npz\n+ k-reciprocal:k1=20,k2=6,lambda=0.3"
    widest = max(table.fontMetrics().horizontalAdvance(line) for line in text.split("\n"))
    assert table.horizontalHeader().sectionSize(OTHER_AP) >= widest + 12
    assert name in model.headerData(OTHER_AP, Qt.Orientation.Horizontal,
                                    Qt.ItemDataRole.ToolTipRole)
