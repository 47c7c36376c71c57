"""Opening in the window: progress and Cancel, several methods, conventions, drag and drop,
the Open dialog's request, and the comparison window a result click opens."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent

from irviewer.core.evaluation import POSITIVE
from irviewer.gui.main_window import MainWindow
from irviewer.gui.opening.open_dialog import OpenDialog
from irviewer.opening.request import OpenRequest, demo_paths, demo_request

MANIFEST = "image,instance,role\na1.jpg,a,both\na2.jpg,a,gallery\nb1.jpg,b,both\nb2.jpg,b,gallery\n"


@pytest.fixture
def small(tmp_path):
    """A 4-image manifest with two descriptor files that disagree on query a1."""
    (tmp_path / "set.csv").write_text(MANIFEST)
    names = np.array(["a1", "a2", "b1", "b2"])
    good = np.array([[1, 0], [0.9, 0.1], [0, 1], [0.1, 0.9]], dtype=np.float32)
    bad = np.array([[1, 0], [0, 1], [0.9, 0.1], [0.1, 0.9]], dtype=np.float32)
    np.savez(tmp_path / "good.npz", features=good, names=names)
    np.savez(tmp_path / "bad.npz", features=bad, names=names)
    return tmp_path


def make_window(qtbot) -> MainWindow:
    w = MainWindow(top_k=20)
    qtbot.addWidget(w)
    w.show()
    return w


def test_progress_then_cancel_keeps_what_was_shown(qtbot, small, make_opening_slow):
    w = make_window(qtbot)
    w.open_paths(small / "set.csv", small / "good.npz", sync=True)
    before = w.opened
    closed = make_opening_slow()
    w.open_paths(*demo_paths())
    qtbot.waitUntil(lambda: w.opening.progress.maximum() == 1000 and w.opening.progress.value() > 0,
                    timeout=5000)
    assert w.opening.cancel_button.isVisibleTo(w) and w.opening.progress.isVisibleTo(w)
    assert w.statusBar().currentMessage().startswith("Ranking ")
    qtbot.mouseClick(w.opening.cancel_button, Qt.MouseButton.LeftButton)
    assert closed.wait(5), "the worker's generator was not closed"
    w.opening.opener.wait()
    assert not w.opening.cancel_button.isVisibleTo(w) and not w.opening.progress.isVisibleTo(w)
    assert w.statusBar().currentMessage() == "Opening cancelled"
    assert w.opened is before and w.last_error is None


def test_two_methods_switch_without_reranking(qtbot, small):
    w = make_window(qtbot)
    w.open_paths(small / "set.csv", small / "good.npz", small / "bad.npz", sync=True)
    assert [w.bar.method_box.itemText(i) for i in range(2)] == ["good.npz", "bad.npz"]
    assert w.bar.method_box.isEnabled()
    w.select_query("a1")
    assert w.results.grid.tiles[0].relevance == POSITIVE
    good_ranking = w.evaluation.ranking
    w.bar.method_box.setCurrentText("bad.npz")
    assert w.evaluation.ranking is w.opened.methods["bad.npz"].ranking is not good_ranking
    assert w.results.grid.tiles[0].name == "b1" and w.results.grid.tiles[0].relevance != POSITIVE
    # a1 ranks b1 (0.994), b2 (0.110), a2 (0.0): its one positive at rank 3
    assert w.evaluation.per_query["AP"][w.current] == pytest.approx(1 / 3)


def test_ap_convention_and_self_match_rescore_the_same_ranking(qtbot, small):
    w = make_window(qtbot)
    w.open_paths(small / "set.csv", small / "bad.npz", sync=True)
    ranking = w.evaluation.ranking
    assert w.bar.ap_box.itemText(0) == "finite-sum AP (the protocol's)"
    w.bar.ap_box.setCurrentIndex(2)
    assert w.evaluation.protocol.ap == "trapezoid" and w.evaluation.ranking is ranking
    assert "trapezoid AP" in w.bar.summary.text()
    w.bar.ap_box.setCurrentIndex(0)
    w.bar.self_box.setCurrentIndex(2)  # keep: the query's own image comes back at rank 1
    assert w.evaluation.protocol.self_match == "keep"
    w.select_query("a1")
    assert w.results.grid.tiles[0].name == "a1"


def test_top_k_spin_box_sets_the_number_of_tiles(qtbot):
    w = make_window(qtbot)
    w.open_request(demo_request(), sync=True)
    w.results.k_box.setValue(10)
    assert len(w.results.grid.tiles) == 10
    w.results.k_box.setValue(100)
    assert len(w.results.grid.tiles) == 100
    w.results.k_box.setValue(500)
    assert w.results.k_box.value() == 200 and len(w.results.grid.tiles) == 154  # the whole gallery
    assert "the list ends here" in w.results.results_label.text()


def test_ap_range_spin_boxes_filter_the_table(qtbot):
    w = make_window(qtbot)
    w.open_request(demo_request(), sync=True)
    w.queries.ap_low.setValue(90)
    ap = w.evaluation.per_query["AP"]
    assert w.queries.proxy.rowCount() == int(np.sum(ap >= 0.9))
    assert w.queries.count.text() == f"{int(np.sum(ap >= 0.9))} of 22 queries shown"
    w.set_ap_range(None)
    assert w.queries.proxy.rowCount() == 22 and w.queries.ap_low.value() == 0


def drop(w: MainWindow, paths) -> None:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime,
                       Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier)
    w.dropEvent(event)


def test_dropping_a_dataset_with_descriptors_then_another_descriptor_file(qtbot, small):
    w = make_window(qtbot)
    drop(w, [small / "good.npz", small / "set.csv"])
    qtbot.waitUntil(lambda: w.opened is not None, timeout=10000)
    assert list(w.opened.methods) == ["good.npz"]
    drop(w, [small / "bad.npz"])
    qtbot.waitUntil(lambda: len(w.opened.methods) == 2, timeout=10000)
    assert list(w.opened.methods) == ["good.npz", "bad.npz"]


def test_dropping_two_datasets_is_explained(qtbot, small):
    (small / "other.csv").write_text(MANIFEST)
    w = make_window(qtbot)
    drop(w, [small / "set.csv", small / "other.csv"])
    assert w.last_error.startswith("Drop one dataset at a time")


def test_open_dialog_builds_the_request(qtbot, small):
    dialog = OpenDialog()
    qtbot.addWidget(dialog)
    assert dialog.request() is None and "dataset" in dialog.message.text()
    dialog.dataset.setText(str(small / "set.csv"))
    assert dialog.request() is None and "descriptor" in dialog.message.text()
    dialog.methods.addItems([str(small / "good.npz")])
    dialog.fields["images"].setText(str(small))
    dialog.fields["instance_rule"].setText("dash")
    request = dialog.request()
    assert request == OpenRequest(small / "set.csv", (small / "good.npz",), (), None,
                                  request.options)
    assert request.options.images == small and request.options.instance_rule == "dash"
    again = OpenDialog(initial=request)
    qtbot.addWidget(again)
    assert again.request() == request


def test_clicking_a_result_compares_it_with_the_query(qtbot):
    w = make_window(qtbot)
    w.open_request(demo_request(), sync=True)
    w.select_query("images/leonardo_mona-lisa_query")
    tile = w.results.grid.tiles[2]
    rect = w.results.grid._rect(2)
    qtbot.mouseClick(w.results.grid, Qt.MouseButton.LeftButton, pos=rect.center())
    compare = w.comparison.window
    assert compare is not None and compare.isVisible()
    assert compare.sides[1].name == tile.name
    assert f"rank {tile.rank}" in compare.captions[1].text()
    qtbot.waitUntil(lambda: not compare.views[1].pixmap_item.pixmap().isNull(), timeout=5000)
    view = compare.views[0]
    before = view.transform().m11()
    view.zoom(2.0)
    assert view.transform().m11() == pytest.approx(2 * before)
    compare.step.emit(1)
    assert compare.sides[1].name == w.results.grid.tiles[3].name
    compare.step.emit(-10)  # before the first result: stays
    assert compare.sides[1].name == w.results.grid.tiles[3].name
    compare.close()


def test_command_line_names_several_methods_and_reader_options(tmp_path):
    from irviewer.cli.viewer import build_viewer_parser
    from irviewer.gui.app import request_from_args

    args = build_viewer_parser().parse_args(
        [str(tmp_path / "set.csv"), "-d", "a.npz", "b.npz", "--ranking", "c.run",
         "--images", str(tmp_path), "--format", "manifest", "--instance-rule", "dash"])
    request = request_from_args(args)
    assert request.descriptors == (Path("a.npz"), Path("b.npz"))
    assert request.rankings == (Path("c.run"),) and request.format == "manifest"
    assert request.options.images == tmp_path and request.options.instance_rule == "dash"
    assert request_from_args(build_viewer_parser().parse_args([])) == demo_request()


@pytest.mark.parametrize("form", ["-d A -d B", "-d A B"])
def test_the_window_opens_every_descriptor_file_of_its_command_line(qtbot, form):
    """`irviewer DATASET -d A -d B` opened B alone: -d now extends, as everywhere."""
    from irviewer.cli.viewer import build_viewer_parser
    from irviewer.opening.options import request_from_args

    manifest, strong = demo_paths()
    files = {"A": str(strong), "B": str(strong.parent / "weak.npz")}
    args = build_viewer_parser().parse_args([str(manifest), *(files.get(w, w)
                                                           for w in form.split())])
    w = make_window(qtbot)
    w.open_request(request_from_args(args), sync=True)
    assert w.last_error is None, w.last_error
    assert list(w.opened.methods) == ["strong.npz", "weak.npz"]


def test_a_dataset_without_methods_exits_2_with_one_line(tmp_path, capsys):
    from irviewer.cli import main

    assert main([str(tmp_path / "set.csv")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "-d FILE" in err


@pytest.fixture
def window(demo_window):
    """The window with the demo open (both descriptor files), shown."""
    return demo_window


def test_esc_in_the_filter_box_does_not_cancel_loading_and_open_waits(window, qtbot,
                                                                      make_opening_slow):
    slow_open = make_opening_slow()
    window.queries.filter_edit.setFocus()
    qtbot.keyClicks(window.queries.filter_edit, "mo")
    window.open_paths(*demo_paths())
    qtbot.waitUntil(lambda: window.opening.progress.value() > 0, timeout=5000)
    assert window.opening.progress.text() == f"{window.opening.progress.value() // 10}%"
    open_action = window.menus.file.actions()[0]
    assert open_action.text() == "&Open…" and not open_action.isEnabled()  # one at a time
    qtbot.keyClick(window.queries.filter_edit, Qt.Key.Key_Escape)
    assert window.opening.running and not slow_open.is_set()
    assert window.queries.filter_edit.text() == ""  # Esc there clears the filter
    window.queries.table.setFocus()
    qtbot.keyClick(window.queries.table, Qt.Key.Key_Escape)
    assert slow_open.wait(5) and not window.opening.running
    window.opening.wait()
    assert open_action.isEnabled()


def test_dropping_files_that_are_already_open_says_so(window):
    strong, weak = demo_paths()[1], demo_request().descriptors[1]
    before = window.opened
    window.open_dropped([strong])
    assert "already open" in window.statusBar().currentMessage()
    window.open_dropped([demo_paths()[0], strong, weak])
    assert "already open" in window.statusBar().currentMessage()
    assert window.opened is before and not window.opening.running


def test_an_error_in_the_window_names_the_open_dialogs_fields(qtbot, tmp_path):
    import re

    from irviewer.formats.base import reader_options
    from irviewer.gui.opening.open_dialog import FIELD_LABELS
    from tests.formats.test_oxford import NAMES, write_gt

    gt = write_gt(tmp_path / "gt")
    np.savez(tmp_path / "d.npz", features=np.ones((len(NAMES), 2), np.float32))  # no names
    w = MainWindow()
    qtbot.addWidget(w)
    w.open_paths(gt, tmp_path / "d.npz", sync=True)
    assert w.last_error is not None and "--" not in w.last_error
    named = re.findall(r"“([^”]+)” in the Open dialog", w.last_error)
    assert named == ["Images", "Row names"]
    assert set(named) <= set(FIELD_LABELS.values())
    assert {s.label for s in reader_options().values()} <= set(FIELD_LABELS.values())
