"""A query's ranked results and missed positives: the grid as high as its list, the query
image growing with the window, missed positives with their score, names elided in the
middle, a right click opening the tile's menu, and the legend naming what the protocol
ignores."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from irviewer.gui.main_window import MINIMUM_SIZE, MainWindow
from irviewer.opening.request import demo_request

#: A demo query that fails with strong.npz (AP 14.2): positives beyond the top 20.
GAUGUIN = "images/gauguin_three-tahitian-women_query"


@pytest.fixture
def window(demo_window):
    """The window with the demo open (both descriptor files), shown."""
    return demo_window


def test_a_short_list_after_a_long_one_leaves_no_blank_space(window, qtbot):
    grid = window.results.grid
    window.results.k_box.setValue(200)
    long = grid.minimumHeight()
    window.results.k_box.setValue(10)
    assert grid.minimumHeight() == grid.heightForWidth(grid.width()) < long
    qtbot.waitUntil(lambda: grid.height() == grid.heightForWidth(grid.width()), timeout=2000)


def test_the_query_image_grows_with_the_window(qtbot, window):
    window.resize(1600, 1000)
    qtbot.waitUntil(lambda: window.results.query_image.width() > 300, timeout=3000)
    small = MainWindow(top_k=20)
    qtbot.addWidget(small)
    small.show()
    small.open_request(demo_request(), sync=True)
    small.resize(*MINIMUM_SIZE)
    qtbot.wait(50)
    assert 160 <= small.results.query_image.width() < window.results.query_image.width()


def test_missed_positives_show_their_score(window):
    window.select_query(GAUGUIN)  # AP 14.2: positives beyond the top 20
    from irviewer.gui.widgets.tiles import score_text

    missed = window.results.missed.tiles
    assert missed
    for tile in missed:
        row = window.evaluation.ranking.score_row(window.current)
        assert tile.score == pytest.approx(float(row[tile.index]), abs=1e-5)
        assert score_text(tile) == f"{tile.score:.3f}" and "nan" not in tile.tooltip()


def test_tile_names_are_elided_in_the_middle_and_whole_in_the_tooltip(window):
    from dataclasses import replace

    grid = window.results.grid
    tile = replace(grid.tiles[0], name="christ_church_000093_with_a_long_tail",
                   title="Christ Church")
    short = grid.elided_name(tile, 80)
    assert "…" in short and short.startswith("chr") and short.endswith("ail")
    assert grid.elided_name(tile, 2000) == tile.name
    assert tile.tooltip().splitlines()[:2] == [tile.name, "Christ Church"]


def test_right_click_on_a_tile_opens_its_menu_not_the_comparison(window, qtbot):
    from PySide6.QtGui import QContextMenuEvent, QGuiApplication

    grid = window.results.grid
    centre = grid._rect(1).center()
    qtbot.mouseClick(grid, Qt.MouseButton.RightButton, pos=centre)
    assert window.comparison.window is None  # a right click is not a left click
    asked = []
    window.results.tile_menu_requested.disconnect(window.inspector._popup_tile_menu)  # offscreen
    window.results.tile_menu_requested.connect(lambda tiles, at, pos: asked.append(at))
    window.inspector.add_tile_menu_entries(lambda menu, tile: menu.addAction(f"Mark {tile.name}"))
    QApplication.sendEvent(grid, QContextMenuEvent(QContextMenuEvent.Reason.Mouse, centre,
                                                   grid.mapToGlobal(centre)))
    assert asked == [1]
    menu = window.inspector.tile_menu(tuple(grid.tiles), 1)
    texts = [a.text() for a in menu.actions() if not a.isSeparator()]
    tile = grid.tiles[1]
    # the built-in entries first, then the hooks' (the corrections' own, then this one)
    assert texts[:2] == ["Compare with the query", "Copy image name"]
    assert texts[-1] == f"Mark {tile.name}"
    next(a for a in menu.actions() if a.text() == "Copy image name").trigger()
    assert QGuiApplication.clipboard().text() == tile.name
    next(a for a in menu.actions() if a.text() == "Compare with the query").trigger()
    assert window.comparison.window.sides[1].name == tile.name
    window.comparison.window.close()
    menu.deleteLater()


def test_the_legend_names_what_the_hard_protocol_ignores(qtbot, tmp_path):
    from tests.gui.test_main_window import revisited_case

    w = MainWindow()
    qtbot.addWidget(w)
    w.open_paths(*revisited_case(tmp_path), sync=True)
    w.bar.protocol_box.setCurrentText("revisited-hard")
    assert "ignored (junk, Easy images)" in w.results.legend.text()
    w.bar.protocol_box.setCurrentText("revisited-easy")
    assert "ignored (junk, Hard images)" in w.results.legend.text()
    assert "the query itself" not in w.results.legend.text()
