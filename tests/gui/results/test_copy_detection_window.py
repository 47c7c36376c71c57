"""A DISC21 copy-detection set in the window: microAP heads the summary with the queries
with and without a copy counted, the Top column shows every query's best answer so that a
query without a copy answered at a high score can be sorted to the top, and such a query's
header and tiles say what was answered and at which score; a reference outside the gallery
is a tile of its own, named, that a click does not open as a gallery image."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt

from irviewer.formats.base import ReadOptions
from irviewer.gui.results.query_model import TOP
from irviewer.opening.request import OpenRequest
from tests.formats.test_disc21 import descriptor_set
from tests.gui.results.test_families import open_window


def test_a_copy_detection_set_shows_its_queries_without_a_copy(qtbot, tmp_path):
    gt, npz = descriptor_set(tmp_path)
    w = open_window(qtbot, OpenRequest(gt, (npz,), options=ReadOptions(copy_pairs="knn=4")))
    summary = w.bar.summary.text()
    assert summary.index("microAP") < summary.index("mAP</b>")
    assert "2 queries with a copy, 3 without" in summary
    table = w.queries.table
    assert not table.isColumnHidden(TOP)
    table.sortByColumn(TOP, Qt.SortOrder.DescendingOrder)
    tops = w.evaluation.per_query["top_score"]
    first = w.queries.model.query_of(0)
    assert tops[first] == np.nanmax(tops)
    # Q4 is a near copy of R20, which the ground truth does not list: its best answer is
    # a false positive at a score as high as a true copy's.
    w.select_query("Q4")
    metrics = w.results.query_metrics.text()
    assert "<b>no copy</b> among the references" in metrics
    assert "4 answers, the best at score" in metrics and "false positives in microAP" in metrics
    tiles = w.results.grid.tiles
    assert len(tiles) == 4 and all(not np.isnan(t.score) for t in tiles)
    assert tiles[0].name == "R20" and [t.rank for t in tiles] == [1, 2, 3, 4]


def test_a_reference_outside_the_gallery_is_a_named_tile(qtbot, tmp_path):
    gt = tmp_path / "gt.csv"
    gt.write_text("query_id,reference_id\nQ1,R1\nQ2,\n", encoding="utf-8")
    predictions = tmp_path / "p.csv"
    predictions.write_text("query_id,reference_id,score\nQ2,R9,0.9\nQ2,R1,0.5\nQ1,R1,0.8\n",
                           encoding="utf-8")
    w = open_window(qtbot, OpenRequest(gt, rankings=(predictions,)))
    w.select_query("Q2")
    tiles = w.results.grid.tiles
    assert [(t.name, t.index, t.rank) for t in tiles] == [("R9", -1, 1), ("R1", 0, 2)]
    assert "not a gallery image" in tiles[0].tooltip()
    clicked = []
    w.results.grid.clicked.connect(clicked.append)
    qtbot.mouseClick(w.results.grid, Qt.MouseButton.LeftButton,
                     pos=w.results.grid._rect(0).center())
    assert clicked == []
