"""The --screenshot image is checked pixel by pixel, not only for existing: every visible
result tile has its relevance colour on its frame and a decoded photograph inside (not
the grey placeholder), the query image is there, and the PR plot is drawn."""

from __future__ import annotations

import os
import re
import stat

import numpy as np
import pytest
from PIL import Image
from PySide6.QtCore import QPoint

from irviewer.core.errors import InputError
from irviewer.gui.app import screenshot
from irviewer.gui.main_window import MainWindow
from irviewer.gui.theme import RELEVANCE
from irviewer.opening.request import demo_request

QUERY = "images/cezanne_boy-in-the-red-vest_query"
PLACEHOLDER = (0xF4, 0xF2, 0xEE)  # the tile background while a thumbnail loads


def rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))


def test_screenshot_shows_every_visible_tile_with_its_colour_and_photo(qtbot, tmp_path):
    w = MainWindow(top_k=50)
    qtbot.addWidget(w)
    w.open_request(demo_request(), sync=True)
    out = tmp_path / "shot.png"
    screenshot(w, out, QUERY)
    with Image.open(out) as im:
        assert im.size == (w.width(), w.height())
        shot = np.asarray(im.convert("RGB")).astype(int)
    viewport = w.results.grid.visibleRegion().boundingRect()
    checked = 0
    for i, tile in enumerate(w.results.grid.tiles):
        rect = w.results.grid._rect(i)
        if not viewport.contains(rect):
            continue
        frame = w.results.grid.mapTo(w, rect.topLeft() + QPoint(rect.width() // 2, 1))
        assert tuple(shot[frame.y(), frame.x()]) == rgb(RELEVANCE[tile.relevance][0]), (
            i, tile.name)
        centre = w.results.grid.mapTo(w, rect.center())
        patch = shot[centre.y() - 20:centre.y() + 20, centre.x() - 20:centre.x() + 20]
        placeholder = (np.abs(patch - np.array(PLACEHOLDER)).sum(axis=2) < 6).mean()
        assert placeholder < 0.2, f"tile {i} ({tile.name}) shows no photograph"
        checked += 1
    assert checked >= 8  # at least two rows are on screen
    query = w.results.query_image.mapTo(w, w.results.query_image.rect().center())
    assert shot[query.y() - 30:query.y() + 30, query.x() - 30:query.x() + 30].std() > 8
    plot = w.plots.plot.mapTo(w, w.plots.plot.rect().center())
    region = shot[plot.y() - 100:plot.y() + 100, plot.x() - 100:plot.x() + 100]
    assert (np.abs(region - np.array(rgb("#0072B2"))).sum(axis=2) < 60).any(), \
        "the query's PR curve is not drawn"


def test_screenshot_is_written_as_every_file_irviewer_writes(qtbot, tmp_path):
    # atomically, through a temporary file beside it: a replaced image keeps its mode
    # (a group's figure stays readable by the group); a folder that is not there is one
    # sentence
    w = MainWindow(top_k=50)
    qtbot.addWidget(w)
    w.open_request(demo_request(), sync=True)
    out = tmp_path / "shot.png"
    out.write_bytes(b"an older screenshot")
    os.chmod(out, 0o664)
    screenshot(w, out)
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o664
    with Image.open(out) as im:
        assert im.format == "PNG"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shot.png"]
    missing = tmp_path / "nope" / "shot.png"
    with pytest.raises(InputError, match=re.escape(f"the folder {missing.parent} does not "
                                                   "exist")):
        screenshot(w, missing)


def test_garbage_is_collected_in_the_gui_thread_only(qapp):
    """A worker thread's allocation must not start a collection that destroys a widget
    there: automatic collection is off, a timer of the GUI thread collects."""
    import gc

    from irviewer.gui.app import collect_garbage_in_the_gui_thread

    collector = collect_garbage_in_the_gui_thread()
    try:
        assert not gc.isenabled()
        assert collector.timer.isActive() and collector.timer.thread() is qapp.thread()
    finally:
        collector.timer.stop()
        gc.enable()
