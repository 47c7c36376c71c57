"""The query list: an AP range typed in its boxes, a query its filter hides (still shown,
said hidden, not moved by the table's cursor), the Title column and its filter, and its
columns fitting the window at its smallest size."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QItemSelectionModel, Qt
from PySide6.QtGui import QFocusEvent
from PySide6.QtWidgets import QApplication, QHeaderView

from irviewer.gui.main_window import MINIMUM_SIZE, MainWindow
from tests.gui.results.test_result_tiles import GAUGUIN


@pytest.fixture
def window(demo_window):
    """The window with the demo open (both descriptor files), shown."""
    return demo_window


def test_typing_an_ap_range_keeps_what_was_typed(window, qtbot):
    low, high = window.queries.ap_low, window.queries.ap_high
    for spin, text in ((low, "20"), (high, "30")):
        spin.setFocus()
        spin.selectAll()
        qtbot.keyClicks(spin, text)
        qtbot.keyClick(spin, Qt.Key.Key_Tab)
    assert (low.value(), high.value()) == (20, 30)
    assert window.queries.proxy.ap_range == (0.2, 0.3)
    ap = window.evaluation.per_query["AP"]
    assert window.queries.proxy.rowCount() == int(np.sum((ap >= 0.2) & (ap < 0.3)))
    assert low.maximum() == 30 and high.minimum() == 20  # bounded by each other
    window.set_ap_range(None)
    assert (low.value(), high.value(), low.maximum()) == (0, 100, 100)


def test_a_query_the_filter_hides_stays_shown_and_is_said_hidden(window, qtbot):
    window.select_query(GAUGUIN)
    q = window.current
    window.queries.failures.setChecked(True)
    assert window.current == q  # Gauguin fails with strong.npz: still listed
    window.bar.method_box.setCurrentText("weak.npz")
    listed = [window.queries.model.query_of(window.queries.proxy.mapToSource(
        window.queries.proxy.index(r, 0)).row()) for r in range(window.queries.proxy.rowCount())]
    assert q not in listed  # with weak.npz it does not fail: filtered away
    assert window.current == q and window.results.hidden_note.isVisibleTo(window)
    assert "Hidden by the filter" in window.results.hidden_note.text()
    assert not window.queries.table.selectionModel().hasSelection()
    # The table getting focus (a click on its scrollbar, a menu closing) moves no details.
    # Qt then puts its cursor on a row without selecting it (QAbstractItemView's focusIn):
    table = window.queries.table
    for reason in (Qt.FocusReason.TabFocusReason, Qt.FocusReason.PopupFocusReason):
        QApplication.sendEvent(table, QFocusEvent(QEvent.Type.FocusIn, reason))
    table.selectionModel().setCurrentIndex(window.queries.proxy.index(0, 0),
                                           QItemSelectionModel.SelectionFlag.NoUpdate)
    qtbot.wait(20)
    assert window.current == q  # the details did not follow the cursor
    # Clearing the filter lists it again, selected.
    window.queries.failures.setChecked(False)
    assert window.queries.current_query() == q and not window.results.hidden_note.isVisible()
    # A click on another row shows that one.
    window.queries.table.selectRow(0)
    assert window.current == window.queries.current_query() != q


def test_titles_in_the_query_list_its_filter_and_the_comparison(window, qtbot):
    model, proxy = window.queries.model, window.queries.proxy
    assert not window.queries.table.isColumnHidden(5)
    assert model.headerData(5, Qt.Orientation.Horizontal) == "Title"
    window.queries.filter_edit.setText("Mona Lisa")  # the title, not the file name
    assert proxy.rowCount() == 1
    assert proxy.index(0, 0).data() == "leonardo_mona-lisa_query"
    assert proxy.index(0, 5).data().startswith("Mona Lisa")
    tip = proxy.index(0, 0).data(Qt.ItemDataRole.ToolTipRole)
    assert tip.splitlines() == [proxy.index(0, 5).data(), "images/leonardo_mona-lisa_query"]
    window.queries.table.selectRow(0)
    tile = window.results.grid.tiles[0]
    assert tile.title and tile.title in tile.tooltip()  # gallery images have titles too
    window.comparison.show_tile(tuple(window.results.grid.tiles), 0, sync=True)
    captions = window.comparison.window.captions
    assert "Mona Lisa" in captions[0].text() and tile.title in captions[1].text()
    window.comparison.window.close()


def test_a_dataset_without_titles_hides_the_title_column(qtbot, tmp_path):
    from tests.gui.test_main_window import revisited_case

    w = MainWindow()
    qtbot.addWidget(w)
    w.open_paths(*revisited_case(tmp_path), sync=True)
    assert w.queries.table.isColumnHidden(5)


def test_the_window_has_a_minimum_size_and_the_table_columns_fit(window):
    window.resize(300, 200)
    assert (window.width(), window.height()) == MINIMUM_SIZE
    header = window.queries.table.horizontalHeader()
    assert header.sectionResizeMode(0) == QHeaderView.ResizeMode.Stretch
    assert not header.stretchLastSection()
    table = window.queries.table
    total = sum(header.sectionSize(c) for c in range(header.count()))
    assert total <= table.viewport().width() + 1  # nothing runs off to the right
