"""The overview plots show the core's curves, the AP histogram filters the table, and the PR
curve's legend sits outside the curves."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, Qt

from irviewer.core.curves import ap_histogram, cmc_curve, mean_precision_at, query_precision_at
from irviewer.gui.main_window import MainWindow
from irviewer.gui.plots.panel import CURVE_DEPTH
from irviewer.opening.request import OpenRequest, demo_request
from tests.formats.test_reid import market
from tests.gui.results.test_families import descriptors


def demo_window(qtbot) -> MainWindow:
    w = MainWindow(top_k=20)
    qtbot.addWidget(w)
    w.show()
    w.open_request(demo_request(), sync=True)
    return w


def test_plots_hold_the_cores_curves(qtbot):
    w = demo_window(qtbot)
    ev = w.evaluation
    edges, counts = ap_histogram(ev)
    bars = w.plots.overview.histogram.bars.opts
    np.testing.assert_allclose(bars["height"], counts)
    np.testing.assert_allclose(bars["x0"], edges[:-1] * 100)
    assert counts.sum() == 22
    x, y = w.plots.overview.mean_precision.getData()
    ks, p = mean_precision_at(ev, CURVE_DEPTH)
    np.testing.assert_allclose(x, ks)
    np.testing.assert_allclose(y, p)
    w.select_query("images/leonardo_mona-lisa_query")
    x, y = w.plots.overview.query_precision.getData()
    np.testing.assert_allclose(y, query_precision_at(ev, w.current, CURVE_DEPTH)[1])
    ap = ev.per_query["AP"][w.current]
    selected = w.plots.overview.histogram.selected
    assert edges[selected] <= ap < edges[selected + 1] or (ap == 1 and selected == 9)
    assert not w.plots.overview.isTabVisible(w.plots.overview.cmc_index)  # no CMC for museum sets


def test_the_p_at_k_plot_is_built_when_its_tab_is_shown_with_the_curves_given_before(qtbot):
    w = demo_window(qtbot)
    overview = w.plots.overview
    w.select_query("images/leonardo_mona-lisa_query")
    assert overview._precision.plot is None  # not built with the window
    overview.setCurrentIndex(1)  # the P@k tab
    qtbot.waitUntil(lambda: overview._precision.plot is not None)
    assert overview.currentWidget().layout().itemAt(0).widget() is overview.precision
    mean = mean_precision_at(w.evaluation, CURVE_DEPTH)[1]
    np.testing.assert_allclose(overview.mean_precision.getData()[1], mean)
    np.testing.assert_allclose(overview.query_precision.getData()[1],
                               query_precision_at(w.evaluation, w.current, CURVE_DEPTH)[1])
    w.select_query(w.opened.dataset.queries[0].name)  # built: updated at once
    np.testing.assert_allclose(overview.query_precision.getData()[1],
                               query_precision_at(w.evaluation, w.current, CURVE_DEPTH)[1])


def test_clicking_a_bar_filters_the_table_and_clicking_again_clears(qtbot):
    w = demo_window(qtbot)
    histogram = w.plots.overview.histogram
    w.plots.overview.setCurrentWidget(histogram)
    edges, counts = ap_histogram(w.evaluation)
    i = int(np.argmax(counts))
    centre = histogram.plotItem.vb.mapViewToScene(
        QPointF((edges[i] + edges[i + 1]) * 50, counts[i] / 2))
    at = histogram.mapFromScene(centre)
    qtbot.mouseClick(histogram.viewport(), Qt.MouseButton.LeftButton, pos=at)
    assert w.queries.proxy.ap_range == (edges[i], edges[i + 1])
    assert w.queries.proxy.rowCount() == counts[i]
    assert w.queries.ap_low.value() == round(100 * edges[i])
    assert histogram.active == (edges[i], edges[i + 1])
    shown = [w.queries.model.ap(w.queries.proxy.mapToSource(w.queries.proxy.index(r, 0)).row())
             for r in range(w.queries.proxy.rowCount())]
    assert all(edges[i] <= a < edges[i + 1] or (a == 1 and i == 9) for a in shown)
    histogram.click_bin(i)  # the same bar again
    assert w.queries.proxy.ap_range is None and w.queries.proxy.rowCount() == 22


def test_cmc_tab_for_reidentification(qtbot, tmp_path):
    root = market(tmp_path)
    from irviewer.formats.reid import read_reid

    ds = read_reid(root)
    d = descriptors(tmp_path / "d.npz", [*ds.gallery, *(q.name for q in ds.queries)])
    w = MainWindow(top_k=10)
    qtbot.addWidget(w)
    w.open_request(OpenRequest(root, (d,)), sync=True)
    assert w.plots.overview.isTabVisible(w.plots.overview.cmc_index)
    ks, cmc = cmc_curve(w.evaluation, CURVE_DEPTH)
    x, y = w.plots.overview.cmc_curve.getData()
    np.testing.assert_allclose(x, ks)
    np.testing.assert_allclose(y, cmc)
    assert y[0] == w.evaluation.summary["CMC@1"]


def test_the_pr_legend_sits_outside_the_curves(qtbot):
    window = demo_window(qtbot)
    assert window.plots.plot.plotItem.legend is None  # nothing drawn over a curve
    legend = window.plots.pr_legend
    assert legend.isVisibleTo(window) and "this query" in legend.text()
    assert "mean over queries" in legend.text()
    assert legend.geometry().bottom() <= window.plots.plot.geometry().top()
