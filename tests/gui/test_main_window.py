"""The inspector window through the paths a user takes: open, click a query, sort, filter,
show ignored items, missing images, errors, stale results, --screenshot."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from irviewer.core.evaluation import IGNORED, NEGATIVE, POSITIVE
from irviewer.gui.main_window import MainWindow
from irviewer.gui.thumbnails import BROKEN, decode
from irviewer.session import demo_paths


@pytest.fixture
def window(qtbot):
    w = MainWindow(top_k=20)
    qtbot.addWidget(w)
    w.show()
    w.open_paths(*demo_paths(), sync=True)
    return w


def test_opening_the_demo_fills_table_and_summary(window):
    assert window.model.rowCount() == 22
    assert "mAP</b> 79.18" in window.summary.text()
    assert window.count.text() == "22 of 22 queries shown"
    assert window.current is not None


def test_clicking_a_query_shows_the_cores_relevance_and_pr_points(window, qtbot):
    ev = window.evaluation
    for row in (0, 5, 21):
        index = window.proxy.index(row, 0)
        window.table.setCurrentIndex(index)
        q = window.model.query_of(window.proxy.mapToSource(index).row())
        assert window.current == q
        tiles = window.grid.tiles
        assert len(tiles) == 20
        expected = ev.relevance(q, np.array([t.index for t in tiles]))
        assert [t.relevance for t in tiles] == expected.tolist()
        assert [t.rank for t in tiles] == list(range(1, 21))
        recall, precision = ev.pr_curve(q)
        x, y = window.plot.query_points.getData()
        np.testing.assert_allclose(x, recall)
        np.testing.assert_allclose(y, precision)
        missed_idx, _ = ev.missed_positives(q, 20)
        assert [t.index for t in window.missed.tiles] == missed_idx.tolist()
        assert all(t.relevance == POSITIVE for t in window.missed.tiles)


def test_sorting_and_filtering(window):
    window.table.sortByColumn(1, Qt.SortOrder.AscendingOrder)
    aps = [float(window.proxy.index(r, 1).data()) for r in range(window.proxy.rowCount())]
    assert aps == sorted(aps)
    window.failures.setChecked(True)
    assert window.proxy.rowCount() == 2  # mP@1 90.91 % of 22 queries: two failures
    assert window.count.text() == "2 of 22 queries shown"
    window.failures.setChecked(False)
    window.filter_edit.setText("mona")
    assert window.proxy.rowCount() == 1
    assert window.proxy.index(0, 0).data() == "leonardo_mona-lisa_query"


def test_next_failure_selects_the_failing_query(window):
    window.next_failure()
    q = window.current
    assert window.evaluation.per_query["P@1"][q] == 0


def test_ignored_items_toggle_and_missing_images(tmp_path, qtbot):
    (tmp_path / "set.csv").write_text("image,instance,role\na1.jpg,a,both\na2.jpg,a,gallery\n"
                                      "b1.jpg,b,gallery\n")
    np.savez(tmp_path / "d.npz", features=np.array([[1, 0], [0.8, 0.6], [0.9, 0.4]],
                                                   dtype=np.float32),
             names=np.array(["a1", "a2", "b1"]))
    w = MainWindow()
    qtbot.addWidget(w)
    w.open_paths(tmp_path / "set.csv", tmp_path / "d.npz", sync=True)
    assert [t.index for t in w.grid.tiles] == [2, 1]  # a1 itself is removed
    w.ignored_box.setChecked(True)
    assert [t.relevance for t in w.grid.tiles] == [IGNORED, NEGATIVE, POSITIVE]
    assert w.grid.tiles[0].rank is None
    assert decode(w.grid.tiles[1].path, 64) is None  # missing file: name-only tile
    w.grid.repaint()


def test_reader_errors_become_a_dialog_not_a_traceback(tmp_path, qtbot):
    w = MainWindow()
    qtbot.addWidget(w)
    w.open_paths(tmp_path / "nope.csv", tmp_path / "d.npz", sync=True)
    assert w.last_error == f"{tmp_path / 'nope.csv'}: no such file or folder"


def test_only_the_newest_request_is_shown(qtbot):
    w = MainWindow()
    qtbot.addWidget(w)
    seen = []
    w.opener.opened.connect(lambda o: seen.append(o))
    w.open_paths(*demo_paths())  # in a thread ...
    w.open_paths(*demo_paths(), sync=True)  # ... made stale by this one
    w.opener.wait()
    qtbot.wait(50)
    assert len(seen) == 1


def test_broken_and_bomb_images_decode_to_a_marker(tmp_path):
    from PIL import Image

    (tmp_path / "bad.jpg").write_bytes(b"\xff\xd8\xff not really a jpeg")
    assert decode(tmp_path / "bad.jpg", 64) == BROKEN
    big = tmp_path / "bomb.png"
    Image.new("1", (12_000, 12_000)).save(big)  # 144 Mpx: over Pillow's bomb threshold
    assert decode(big, 64) == BROKEN


def test_screenshot_command(tmp_path):
    from irviewer.cli import main

    out = tmp_path / "shot.png"
    assert main(["--screenshot", str(out), "--select", "images/leonardo_mona-lisa_query"]) == 0
    from PIL import Image

    with Image.open(out) as im:
        assert im.size[0] >= 1000


@pytest.mark.parametrize("column", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("order", [Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder])
def test_sorted_rows_still_show_the_right_query(window, column, order):
    window.table.sortByColumn(column, order)
    keys = [window.proxy.index(r, column).data(Qt.ItemDataRole.UserRole)
            for r in range(window.proxy.rowCount())]
    assert keys == sorted(keys, reverse=order == Qt.SortOrder.DescendingOrder)
    window.table.selectRow(0)
    shown = window.opened.dataset.queries[window.current].name.rsplit("/", 1)[-1]
    assert shown == window.proxy.index(0, 0).data()


def test_sorting_keeps_the_selected_query_selected(window):
    window.select_query("images/leonardo_mona-lisa_query")
    before = window.current
    window.table.sortByColumn(1, Qt.SortOrder.AscendingOrder)
    row = window.proxy.mapToSource(window.table.currentIndex()).row()
    assert window.model.query_of(row) == before == window.current


def test_ap_range_filter(window):
    ap = window.evaluation.per_query["AP"]
    window.proxy.set_ap_range((0.9, 1.0))
    shown = [window.model.ap(window.proxy.mapToSource(window.proxy.index(r, 0)).row())
             for r in range(window.proxy.rowCount())]
    assert shown and all(0.9 <= a <= 1.0 for a in shown)
    assert len(shown) == int(np.sum(ap >= 0.9))  # the last bin includes AP = 1
    window.proxy.set_ap_range(None)
    assert window.proxy.rowCount() == 22


def test_switching_protocol_rescores_without_reranking(tmp_path, qtbot):
    import pickle

    imlist = [f"img_{i}" for i in range(6)]
    gnd = {"imlist": imlist, "qimlist": ["qa"],
           "gnd": [{"easy": [0], "hard": [2], "junk": [1], "bbx": [0, 0, 4, 4]}]}
    (tmp_path / "gnd_rtest.pkl").write_bytes(pickle.dumps(gnd))
    angles = np.linspace(0, 3, 7)
    vectors = np.stack([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32)
    np.savez(tmp_path / "d.npz", features=np.vstack([vectors[1:], vectors[:1]]),
             names=np.array([*imlist, "qa"]))
    w = MainWindow()
    qtbot.addWidget(w)
    w.open_paths(tmp_path / "gnd_rtest.pkl", tmp_path / "d.npz", sync=True)
    names = [w.protocol_box.itemText(i) for i in range(w.protocol_box.count())]
    assert names == ["revisited-easy", "revisited-medium", "revisited-hard"]
    ranking = w.evaluation.ranking
    for name in names:
        w.protocol_box.setCurrentText(name)
        assert w.evaluation.protocol.name == name
        assert w.evaluation.ranking is ranking  # re-scored, not re-ranked
        ap = w.opened.evaluations[name].per_query["AP"][0]
        assert w.model.index(0, 1).data() == f"{100 * ap:.1f}"
        assert [t.relevance for t in w.grid.tiles] == w.evaluation.relevance(
            0, np.array([t.index for t in w.grid.tiles])).tolist()


def test_filters_hold_through_sorting_and_a_protocol_change(window):
    window.filter_edit.setText("VAN")  # case-insensitive
    expected = sorted(n for n in (window.proxy.index(r, 0).data()
                                  for r in range(window.proxy.rowCount())))
    assert len(expected) == 5 and all("van" in n for n in expected)
    for column in (1, 0, 3):
        for order in (Qt.SortOrder.DescendingOrder, Qt.SortOrder.AscendingOrder):
            window.table.sortByColumn(column, order)
            shown = [window.proxy.index(r, 0).data() for r in range(window.proxy.rowCount())]
            assert sorted(shown) == expected
    window.failures.setChecked(True)
    window.filter_edit.setText("")
    window.ap_box.setCurrentIndex(2)  # re-scored: the filters apply to the new values
    p1 = window.evaluation.per_query["P@1"]
    assert window.proxy.rowCount() == int(np.sum(p1 == 0))
