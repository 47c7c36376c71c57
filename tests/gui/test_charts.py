"""The dataset charts show the core's numbers: bars are the histogram of the core's AP values,
curves are the core's P@k and CMC; clicking a bar asks for its AP range. The last tests build
and tear down many plot widgets the way windows do (the crash check)."""

from __future__ import annotations

import gc

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QApplication, QSplitter, QTabWidget, QVBoxLayout, QWidget

from irviewer.core.evaluation import evaluate
from irviewer.core.protocols import Protocol
from irviewer.core.ranking import rank
from irviewer.gui.charts import APHistogram, Charts, CurvePlot
from irviewer.gui.plots import PRPlot
from tests.core.helpers import aligned, random_dataset, sign_vectors

MARKET = Protocol("m", "test", positive=("positive",), ignored=("junk",), cmc="market")
EDGES = np.linspace(0.0, 1.0, 11)


def evaluation(seed: int = 0, protocol: Protocol = MARKET, n_queries: int = 40):
    rng = np.random.default_rng(seed)
    ds = random_dataset(rng, n_queries, 30)
    q, g = sign_vectors(rng, n_queries), sign_vectors(rng, 30)
    return evaluate(ds, rank(aligned(q, g), ds, k=30), protocol)


@pytest.fixture
def charts(qtbot):
    w = Charts(depth=20)
    qtbot.addWidget(w)
    w.resize(900, 300)
    w.show()
    qtbot.waitExposed(w)
    return w


def test_bars_are_the_histogram_of_the_cores_ap_values(charts):
    ev = evaluation()
    assert ev.summary["n_skipped"] > 0  # skipped queries must not land in a bar
    charts.show_evaluation(ev)
    heights = charts.histogram.bars.opts["height"]
    np.testing.assert_array_equal(heights, np.histogram(ev.ap_values()[1], bins=EDGES)[0])
    assert heights.sum() == ev.summary["n_evaluated"]
    np.testing.assert_allclose(charts.histogram.bars.opts["x0"], EDGES[:-1] * 100)


def test_curves_are_the_cores_curves(charts):
    ev = evaluation()
    charts.show_evaluation(ev)
    x, y = charts.precision.series["mean"].getData()
    ks, p = ev.precision_curve(20)
    np.testing.assert_allclose(x, ks)
    np.testing.assert_allclose(y, p)
    x, y = charts.cmc.series["mean"].getData()
    ks, cmc = ev.cmc_curve(20)
    np.testing.assert_allclose(x, ks)
    np.testing.assert_allclose(y, cmc)
    q = int(np.flatnonzero(ev.evaluated)[3])
    charts.show_query(ev, q)
    x, y = charts.precision.series["query"].getData()
    np.testing.assert_allclose(y, ev.query_precision_curve(q, 20)[1])
    ap = ev.per_query["AP"][q]
    i = charts.histogram.selected
    assert EDGES[i] <= ap < EDGES[i + 1] or (ap == 1 and i == 9)
    skipped = int(np.flatnonzero(~ev.evaluated)[0])
    charts.show_query(ev, skipped)
    assert len(charts.precision.series["query"].getData()[0] or []) == 0
    assert charts.histogram.selected is None


def test_items_are_built_once_and_updated(charts):
    items = [charts.histogram.bars, *charts.precision.series.values(),
             *charts.cmc.series.values()]
    for seed in range(3):
        ev = evaluation(seed)
        charts.show_evaluation(ev)
        charts.show_query(ev, 0)
    assert [charts.histogram.bars, *charts.precision.series.values(),
            *charts.cmc.series.values()] == items
    assert len(charts.precision.listDataItems()) == 2
    assert len(charts.precision.legend.items) == 2


def test_cmc_plot_says_when_the_protocol_has_none(charts):
    charts.show_evaluation(evaluation(protocol=MARKET.override(cmc="none")))
    assert len(charts.cmc.series["mean"].getData()[0] or []) == 0
    assert "no CMC" in charts.cmc.titleLabel.text


def click_bar(qtbot, charts: Charts, i: int) -> None:
    """A real left click on the middle of bar ``i`` (in the view's coordinates)."""
    hist = charts.histogram
    x = (EDGES[i] + EDGES[i + 1]) * 50
    scene_pos = hist.vb.mapViewToScene(QPointF(x, max(hist.counts[i], 1) / 2))
    qtbot.mouseClick(charts.viewport(), Qt.MouseButton.LeftButton,
                     pos=charts.mapFromScene(scene_pos))


def test_clicking_a_bar_emits_its_range_and_again_clears(charts, qtbot):
    ev = evaluation()
    charts.show_evaluation(ev)
    i = int(np.argmax(charts.histogram.counts))
    with qtbot.waitSignal(charts.range_clicked, timeout=1000) as got:
        click_bar(qtbot, charts, i)
    assert got.args == [pytest.approx(EDGES[i]), pytest.approx(EDGES[i + 1])]
    assert charts.histogram.active == (EDGES[i], EDGES[i + 1])
    pens = charts.histogram.bars.opts["pens"]
    assert pens[i].width() == 3 and all(p.width() != 3 for j, p in enumerate(pens) if j != i)
    with qtbot.waitSignal(charts.range_cleared, timeout=1000):
        click_bar(qtbot, charts, i)
    assert charts.histogram.active is None
    j = (i + 1) % 10
    with qtbot.waitSignal(charts.range_clicked, timeout=1000) as got:
        charts.histogram.click_bin(j)
    assert got.args == [EDGES[j], EDGES[j + 1]]


def test_a_click_outside_the_bars_emits_nothing(charts, qtbot):
    charts.show_evaluation(evaluation())
    with qtbot.assertNotEmitted(charts.range_clicked), \
            qtbot.assertNotEmitted(charts.range_cleared):
        charts.histogram._on_click(150.0, 1.0)
        charts.histogram._on_click(-20.0, 1.0)


def test_the_last_bin_holds_ap_one():
    hist = APHistogram()
    hist.set_values(np.array([0.0, 0.3, 0.95, 1.0, np.nan]))
    assert hist.counts.tolist() == np.histogram([0.0, 0.3, 0.95, 1.0], bins=EDGES)[0].tolist()
    assert hist.bin_of(1.0) == 9 and hist.bin_of(0.0) == 0 and hist.bin_of(1.5) is None


# -- construction and teardown, as windows do it (the none_dealloc crash check) -------------

def window_like(tabs: bool) -> tuple[QWidget, list]:
    """A window-like widget holding a PR plot, a Charts view and more PlotWidgets (with
    legends and a bar chart connected to the scene's clicks), in a splitter or in tabs."""
    w = QWidget()
    layout = QVBoxLayout(w)
    holder = QTabWidget() if tabs else QSplitter()
    layout.addWidget(holder)
    pr, charts = PRPlot(), Charts(depth=10)
    extra = pg.PlotWidget(background="w")
    extra.addLegend()
    extra.curve = extra.plot([], [], name="mean")
    bars = pg.PlotWidget(background="w")
    bars.item = pg.BarGraphItem(x0=[], x1=[], height=[], brush="b")
    bars.addItem(bars.item)
    bars.scene().sigMouseClicked.connect(lambda event: None)
    for i, widget in enumerate((pr, charts, extra, bars)):
        holder.addTab(widget, str(i)) if tabs else holder.addWidget(widget)
    return w, [pr, charts, extra, bars]


@pytest.mark.parametrize("tabs", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_many_plot_widgets_build_update_and_close(qtbot, seed, tabs):
    w, (pr, charts, extra, bars) = window_like(tabs)
    qtbot.addWidget(w)
    w.show()
    for s in range(3):
        ev = evaluation(seed + s, n_queries=15)
        charts.show_evaluation(ev)
        charts.show_query(ev, s)
        pr.set_curves(*ev.pr_curve(0), *ev.ap_curve(0), *ev.mean_pr())
        extra.curve.setData(*ev.precision_curve(10))
        bars.item.setOpts(x0=EDGES[:-1], x1=EDGES[1:], height=np.arange(10))
        qtbot.mouseClick(charts.viewport(), Qt.MouseButton.LeftButton)
        qtbot.wait(1)
    w.close()


def test_deleted_windows_and_collected_wrappers(qtbot):
    for seed in range(4):
        w, plots = window_like(tabs=bool(seed % 2))
        w.show()
        plots[1].show_evaluation(evaluation(seed, n_queries=10))
        w.close()
        w.deleteLater()
        QApplication.processEvents()
        del w, plots
        gc.collect()
    lone = [Charts(), CurvePlot("k", "y", [("a", "a", "#000000", False)]), APHistogram()]
    del lone
    gc.collect()
