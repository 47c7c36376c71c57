"""The inspector window through the paths a user takes: open, click a query, sort, filter,
show ignored items, missing images, errors, stale results, --screenshot."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from irviewer.core.convention_names import AP_RULES
from irviewer.core.conventions import all_conventions
from irviewer.core.evaluation import IGNORED, NEGATIVE, POSITIVE
from irviewer.gui.main_window import MainWindow
from irviewer.gui.widgets.thumbnails import BROKEN, decode
from irviewer.opening.request import OpenRequest, demo_paths


@pytest.fixture
def window(qtbot):
    w = MainWindow(top_k=20)
    qtbot.addWidget(w)
    w.show()
    w.open_paths(*demo_paths(), sync=True)
    return w


def test_opening_the_demo_fills_table_and_summary(window):
    assert window.queries.model.rowCount() == 22
    assert "mAP</b> 79.18" in window.bar.summary.text()
    assert window.queries.count.text() == "22 of 22 queries shown"
    assert window.current is not None


def test_clicking_a_query_shows_the_cores_relevance_and_pr_points(window, qtbot):
    ev = window.evaluation
    for row in (0, 5, 21):
        index = window.queries.proxy.index(row, 0)
        window.queries.table.setCurrentIndex(index)
        q = window.queries.model.query_of(window.queries.proxy.mapToSource(index).row())
        assert window.current == q
        tiles = window.results.grid.tiles
        assert len(tiles) == 20
        expected = ev.relevance(q, np.array([t.index for t in tiles]))
        assert [t.relevance for t in tiles] == expected.tolist()
        assert [t.rank for t in tiles] == list(range(1, 21))
        recall, precision = ev.pr_curve(q)
        x, y = window.plots.plot.query_points.getData()
        np.testing.assert_allclose(x, recall)
        np.testing.assert_allclose(y, precision)
        missed_idx, _ = ev.missed_positives(q, 20)
        assert [t.index for t in window.results.missed.tiles] == missed_idx.tolist()
        assert all(t.relevance == POSITIVE for t in window.results.missed.tiles)


def test_sorting_and_filtering(window):
    window.queries.table.sortByColumn(1, Qt.SortOrder.AscendingOrder)
    proxy = window.queries.proxy
    aps = [float(proxy.index(r, 1).data()) for r in range(proxy.rowCount())]
    assert aps == sorted(aps)
    window.queries.failures.setChecked(True)
    assert window.queries.proxy.rowCount() == 2  # mP@1 90.91 % of 22 queries: two failures
    assert window.queries.count.text() == "2 of 22 queries shown"
    window.queries.failures.setChecked(False)
    window.queries.filter_edit.setText("mona")
    assert window.queries.proxy.rowCount() == 1
    assert window.queries.proxy.index(0, 0).data() == "leonardo_mona-lisa_query"


def test_next_failure_moves_the_selection_to_the_next_failing_row(window):
    proxy, model = window.queries.proxy, window.queries.model
    p1 = [model.p_at_1(proxy.mapToSource(proxy.index(r, 0)).row())
          for r in range(proxy.rowCount())]
    failing = [r for r, v in enumerate(p1) if v == 0]
    assert len(failing) == 2
    window.queries.table.selectRow(failing[0])
    window.next_failure()  # from a failing row: on to the next one, not staying put
    assert window.queries.table.currentIndex().row() == failing[1]
    assert window.evaluation.per_query["P@1"][window.current] == 0
    window.next_failure()  # and round to the first
    assert window.queries.table.currentIndex().row() == failing[0]


def test_ignored_items_toggle_and_missing_images(tmp_path, qtbot):
    (tmp_path / "set.csv").write_text("image,instance,role\na1.jpg,a,both\na2.jpg,a,gallery\n"
                                      "b1.jpg,b,gallery\n")
    np.savez(tmp_path / "d.npz", features=np.array([[1, 0], [0.8, 0.6], [0.9, 0.4]],
                                                   dtype=np.float32),
             names=np.array(["a1", "a2", "b1"]))
    w = MainWindow()
    qtbot.addWidget(w)
    w.open_paths(tmp_path / "set.csv", tmp_path / "d.npz", sync=True)
    assert [t.index for t in w.results.grid.tiles] == [2, 1]  # a1 itself is removed
    w.results.ignored_box.setChecked(True)
    assert [t.relevance for t in w.results.grid.tiles] == [IGNORED, NEGATIVE, POSITIVE]
    assert w.results.grid.tiles[0].rank is None
    assert decode(w.results.grid.tiles[1].path, 64) is None  # missing file: name-only tile
    w.results.grid.repaint()


def test_reader_errors_become_a_dialog_not_a_traceback(tmp_path, qtbot):
    w = MainWindow()
    qtbot.addWidget(w)
    w.open_paths(tmp_path / "nope.csv", tmp_path / "d.npz", sync=True)
    assert w.last_error == f"{tmp_path / 'nope.csv'}: no such file or folder"


def test_only_the_newest_request_is_shown(qtbot):
    w = MainWindow()
    qtbot.addWidget(w)
    seen = []
    w.opening.opener.opened.connect(lambda o: seen.append(o))
    w.open_paths(*demo_paths())  # in a thread ...
    w.open_paths(*demo_paths(), sync=True)  # ... made stale by this one
    w.opening.opener.wait()
    qtbot.wait(50)
    assert len(seen) == 1


def test_broken_and_bomb_images_decode_to_a_marker(tmp_path):
    from PIL import Image

    (tmp_path / "bad.jpg").write_bytes(b"\xff\xd8\xff not really a jpeg")
    assert decode(tmp_path / "bad.jpg", 64) == BROKEN
    big = tmp_path / "bomb.png"
    Image.new("1", (12_000, 12_000)).save(big)  # 144 Mpx: over Pillow's bomb threshold
    assert decode(big, 64) == BROKEN


def test_a_closed_window_gets_no_late_thumbnails(qtbot):
    """Closing the window waits for the decodes in flight and drops what arrives after: a
    late thumbnail reaching the widgets of a window being destroyed is how a queued signal
    crashes Qt. Asked again, the cache delivers again."""
    from PySide6.QtGui import QImage

    w = MainWindow(top_k=10)
    qtbot.addWidget(w)
    w.show()
    arrived: list[str] = []
    w.cache.ready.connect(arrived.append)
    w.close()
    assert w.cache.closed
    w.cache._arrived(("late.jpg", (QImage(4, 4, QImage.Format.Format_RGB32), 4)))
    assert arrived == [] and "late.jpg" not in w.cache._items
    assert w.cache.get("again.jpg", None) is ...  # a new request: in use again
    qtbot.waitUntil(lambda: "again.jpg" in arrived)


def test_screenshot_command(tmp_path):
    from irviewer.cli import main

    out = tmp_path / "shot.png"
    assert main(["--screenshot", str(out), "--select", "images/leonardo_mona-lisa_query"]) == 0
    from PIL import Image

    with Image.open(out) as im:
        assert im.size[0] >= 1000


def test_screenshot_process_ends_with_a_whole_png_and_its_exit_code(tmp_path):
    """``python -m irviewer --screenshot`` ends without the interpreter's Qt teardown
    (cli.entry): the PNG is whole, what was printed arrives, and the exit code is kept."""
    import os
    import subprocess
    import sys

    from PIL import Image

    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    out = tmp_path / "shot.png"
    ok = subprocess.run([sys.executable, "-m", "irviewer", "--screenshot", str(out)],
                        capture_output=True, text=True, env=env, timeout=120)
    assert ok.returncode == 0, ok.stderr
    with Image.open(out) as im:
        im.load()  # every byte of the PNG was written
        assert im.size[0] >= 1000
    bad = subprocess.run([sys.executable, "-m", "irviewer", str(tmp_path / "nope.csv"), "-d",
                          str(tmp_path / "nope.npz"), "--screenshot", str(tmp_path / "b.png")],
                         capture_output=True, text=True, env=env, timeout=120)
    assert bad.returncode == 2
    last = bad.stderr.strip().splitlines()[-1]  # (Qt may say something about its plugin)
    assert last.startswith("irviewer: error: ") and "nope.csv" in last
    assert not (tmp_path / "b.png").exists()


@pytest.mark.parametrize("column", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("order", [Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder])
def test_sorted_rows_still_show_the_right_query(window, column, order):
    window.queries.table.sortByColumn(column, order)
    keys = [window.queries.proxy.index(r, column).data(Qt.ItemDataRole.UserRole)
            for r in range(window.queries.proxy.rowCount())]
    assert keys == sorted(keys, reverse=order == Qt.SortOrder.DescendingOrder)
    window.queries.table.selectRow(0)
    shown = window.opened.dataset.queries[window.current].name.rsplit("/", 1)[-1]
    assert shown == window.queries.proxy.index(0, 0).data()


def test_sorting_keeps_the_selected_query_selected(window):
    window.select_query("images/leonardo_mona-lisa_query")
    before = window.current
    window.queries.table.sortByColumn(1, Qt.SortOrder.AscendingOrder)
    row = window.queries.proxy.mapToSource(window.queries.table.currentIndex()).row()
    assert window.queries.model.query_of(row) == before == window.current


def test_ap_range_filter(window):
    ap = window.evaluation.per_query["AP"]
    window.queries.proxy.set_ap_range((0.9, 1.0))
    proxy = window.queries.proxy
    shown = [window.queries.model.ap(proxy.mapToSource(proxy.index(r, 0)).row())
             for r in range(proxy.rowCount())]
    assert shown and all(0.9 <= a <= 1.0 for a in shown)
    assert len(shown) == int(np.sum(ap >= 0.9))  # the last bin includes AP = 1
    window.queries.proxy.set_ap_range(None)
    assert window.queries.proxy.rowCount() == 22


def revisited_case(tmp_path):
    """Write a one-query revisited ground truth and its descriptors; return both files."""
    import pickle

    imlist = [f"img_{i}" for i in range(6)]
    gnd = {"imlist": imlist, "qimlist": ["qa"],
           "gnd": [{"easy": [0], "hard": [2], "junk": [1], "bbx": [0, 0, 4, 4]}]}
    (tmp_path / "gnd_rtest.pkl").write_bytes(pickle.dumps(gnd))
    angles = np.linspace(0, 3, 7)
    vectors = np.stack([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32)
    np.savez(tmp_path / "d.npz", features=np.vstack([vectors[1:], vectors[:1]]),
             names=np.array([*imlist, "qa"]))
    return tmp_path / "gnd_rtest.pkl", tmp_path / "d.npz"


def test_switching_protocol_rescores_without_reranking(tmp_path, qtbot):
    w = MainWindow()
    qtbot.addWidget(w)
    w.open_paths(*revisited_case(tmp_path), sync=True)
    names = [w.bar.protocol_box.itemText(i) for i in range(w.bar.protocol_box.count())]
    assert names == ["revisited-easy", "revisited-medium", "revisited-hard"]
    ranking = w.evaluation.ranking
    for name in names:
        w.bar.protocol_box.setCurrentText(name)
        assert w.evaluation.protocol.name == name
        assert w.evaluation.ranking is ranking  # re-scored, not re-ranked
        ap = w.opened.evaluations[name].per_query["AP"][0]
        assert w.queries.model.index(0, 1).data() == f"{100 * ap:.1f}"
        assert [t.relevance for t in w.results.grid.tiles] == w.evaluation.relevance(
            0, np.array([t.index for t in w.results.grid.tiles])).tolist()


def test_filters_hold_through_sorting_and_a_protocol_change(window):
    window.queries.filter_edit.setText("VAN-")  # case-insensitive (names; "van" is in titles)
    expected = sorted(n for n in (window.queries.proxy.index(r, 0).data()
                                  for r in range(window.queries.proxy.rowCount())))
    assert len(expected) == 5 and all("van" in n for n in expected)
    for column in (1, 0, 3):
        for order in (Qt.SortOrder.DescendingOrder, Qt.SortOrder.AscendingOrder):
            window.queries.table.sortByColumn(column, order)
            proxy = window.queries.proxy
            shown = [proxy.index(r, 0).data() for r in range(proxy.rowCount())]
            assert sorted(shown) == expected
    window.queries.failures.setChecked(True)
    window.queries.filter_edit.setText("")
    window.bar.ap_box.setCurrentIndex(2)  # re-scored: the filters apply to the new values
    p1 = window.evaluation.per_query["P@1"]
    assert window.queries.proxy.rowCount() == int(np.sum(p1 == 0))


def test_rescoring_keeps_the_selected_row_and_the_keys_continue_from_it(window, qtbot):
    window.queries.table.sortByColumn(1, Qt.SortOrder.AscendingOrder)
    window.queries.table.selectRow(7)
    table, q = window.queries.table, window.current
    resets = []
    window.queries.model.modelReset.connect(lambda: resets.append(1))
    for change in (lambda: window.bar.ap_box.setCurrentIndex(2),
                   lambda: window.bar.method_box.setCurrentText("weak.npz"),
                   lambda: window.bar.self_box.setCurrentIndex(2)):
        change()
        assert window.current == q  # the same query, maybe in another row now
        row = table.currentIndex().row()
        assert window.queries.model.query_of(
            window.queries.proxy.mapToSource(table.currentIndex()).row()) == q
        assert table.selectionModel().isRowSelected(row)
    assert resets == []  # updated in place, not reset
    row = table.currentIndex().row()
    table.setFocus()
    qtbot.keyClick(table, Qt.Key.Key_Down)
    assert table.currentIndex().row() == row + 1
    proxy = window.queries.proxy
    assert window.current == window.queries.model.query_of(
        proxy.mapToSource(proxy.index(row + 1, 0)).row())


def test_help_names_every_menu_shortcut(window):
    """Help ▸ Keyboard shortcuts lists every key a menu entry has (a new entry with a
    shortcut must be added to the help too)."""
    from PySide6.QtGui import QAction, QKeySequence

    from irviewer.gui.menus import KEYS_HELP

    keys = {a.shortcut().toString(QKeySequence.SequenceFormat.PortableText)
            for a in window.findChildren(QAction) if not a.shortcut().isEmpty()}
    keys.discard("Ctrl+Q")  # quitting is the platform's
    assert len(keys) >= 8
    missing = sorted(k for k in keys  # the help writes a minus sign for the key "-"
                     if k not in KEYS_HELP and k.replace("-", "−") not in KEYS_HELP)
    assert missing == []


def test_the_ap_box_offers_every_rule_of_the_conventions_table(window):
    """Each AP rule picked in the method bar re-scores with that rule: its mAP is the
    conventions table's row of the rule, and the plotted AP area is the query's AP."""
    rows = {r.key: r for r in all_conventions(window.evaluation)}
    for rule in AP_RULES:
        window.bar.ap_box.setCurrentIndex(window.bar.ap_box.findData(rule))
        ev = window.evaluation
        assert ev.protocol.ap == rule
        assert ev.summary["mAP"] == pytest.approx(rows[f"AP {rule}"].mean, abs=1e-12)
        assert f"mAP</b> {100 * rows[f'AP {rule}'].mean:.2f}" in window.bar.summary.text()
        x, y = ev.ap_curve(window.current)
        assert np.trapezoid(y, x) == pytest.approx(ev.per_query["AP"][window.current])


def test_the_viewer_s_ap_rule_is_the_one_the_window_opens_with(qtbot):
    """``irviewer --ap 11point``: the window opens with that rule chosen and scored."""
    w = MainWindow(top_k=20)
    qtbot.addWidget(w)
    dataset, *methods = demo_paths()
    w.open_request(OpenRequest(dataset, tuple(methods), ap="11point"), sync=True)
    assert w.bar.ap_box.currentData() == "11point"
    assert w.evaluation.protocol.ap == "11point"
    assert "11-point interpolated AP" in w.bar.summary.text()
