"""Corrections in the window: the tile menu re-scores the row and the summary,
undo/redo restore exact values, the panel lists, jumps and reverts, the sidecar is written
after each change and read on reopening (a bad one gives a dialog and is never
overwritten), the corrected mark is painted, the published / corrected switch, the keys
1-4 in the results and in the comparison, relabel with its preview, and the session."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QSettings, Qt
from PySide6.QtGui import QColor, QShortcut

from irviewer.core.evaluation import IGNORED, NEGATIVE, POSITIVE, evaluate
from irviewer.formats.corrections_file import read_corrections
from irviewer.gui.main_window import MainWindow
from irviewer.gui.widgets.tiles import MARK_FILL
from irviewer.opening.request import demo_paths
from irviewer.opening.session_file import load_session


@pytest.fixture
def demo(tmp_path):
    """A copy of the demo (its images linked), so the sidecar lands in tmp_path."""
    csv, desc = demo_paths()
    shutil.copy(csv, tmp_path / "demo.csv")
    shutil.copy(desc, tmp_path / "strong.npz")
    (tmp_path / "images").symlink_to(csv.parent / "images")
    return tmp_path / "demo.csv", tmp_path / "strong.npz"


def make_window(qtbot, demo, author: str = "tester") -> MainWindow:
    settings = QSettings()
    settings.setValue("corrections/author", author)
    w = MainWindow(top_k=20, settings=settings, keep_sessions=False)
    qtbot.addWidget(w)
    w.show()
    w.open_paths(*demo, sync=True)
    w.queries.jump(3)
    return w


@pytest.fixture
def window(qtbot, demo):
    return make_window(qtbot, demo)


def first_tile(w: MainWindow, relevance: int) -> int:
    return next(i for i, t in enumerate(w.results.grid.tiles) if t.relevance == relevance)


def choose(w: MainWindow, at: int, words: str, tiles=None) -> None:
    """Pick ``words`` in the correction menu of ranked tile ``at``."""
    tiles = tuple(tiles if tiles is not None else w.results.grid.tiles)
    menu = w.corrections.tile_menu(tiles, at, QPoint(0, 0), sync=True)
    action = next(a for a in menu.actions() if a.text().split("  ", 1)[-1] == words)
    action.trigger()


def full(w: MainWindow):
    """The evaluation of the corrected ground truth from scratch."""
    ev = w.evaluation
    return evaluate(w.corrections.controller.log.dataset, ev.ranking, ev.protocol)


def table_ap(w: MainWindow, q: int) -> float:
    model = w.queries.model
    return float(model.index(model.row_of(q), 1).data())


def test_a_correction_from_the_menu_rescores_the_row_tiles_and_summary(window):
    w = window
    q = w.current
    ap_before = w.evaluation.per_query["AP"][q]
    summary_before = w.bar.summary.text()
    at = first_tile(w, POSITIVE)
    tile = w.results.grid.tiles[at]
    choose(w, at, "not relevant")
    assert w.current == q
    assert w.evaluation.per_query["AP"][q] < ap_before
    np.testing.assert_array_equal(w.evaluation.per_query["AP"], full(w).per_query["AP"])
    assert table_ap(w, q) == pytest.approx(100 * w.evaluation.per_query["AP"][q], abs=0.05)
    assert w.bar.summary.text() != summary_before
    assert f"{100 * w.evaluation.summary['mAP']:.2f}" in w.bar.summary.text()
    shown = {t.index: t.relevance for t in (*w.results.grid.tiles, *w.results.missed.tiles)}
    assert shown[tile.index] == NEGATIVE
    assert "published →" in w.corrections.line.text.text()
    x, _y = w.plots.plot.query_points.getData()
    recall, _precision = w.evaluation.pr_curve(q)
    np.testing.assert_allclose(x, recall)


def test_undo_and_redo_restore_exact_values(window):
    w = window
    published = {k: v.copy() for k, v in w.evaluation.per_query.items()}
    positive, negative = first_tile(w, POSITIVE), first_tile(w, NEGATIVE)
    choose(w, positive, "not relevant")
    choose(w, negative, "relevant")
    corrected = {k: v.copy() for k, v in w.evaluation.per_query.items()}
    stack = w.corrections.controller.stack
    assert stack.undoText().endswith("negative → positive")
    stack.undo()
    stack.undo()
    for k, v in published.items():
        np.testing.assert_array_equal(w.evaluation.per_query[k], v)
    assert w.corrections.panel.table.rowCount() == 0
    stack.redo()
    stack.redo()
    for k, v in corrected.items():
        np.testing.assert_array_equal(w.evaluation.per_query[k], v)


def test_edit_menu_undo_and_redo_have_their_keys(window):
    edit = next(m for m in (a.menu() for a in window.menuBar().actions()) if m is not None
                and m.title() == "&Edit")
    keys = {a.text().replace("&", "").split()[0]: a.shortcut().toString()
            for a in edit.actions() if a.text()}
    assert keys["Undo"] == "Ctrl+Z" and keys["Redo"] == "Ctrl+Shift+Z"


def test_the_panel_lists_jumps_and_reverts_undoably(window):
    w = window
    q = w.current
    published = w.evaluation.per_query["AP"].copy()
    tile = w.results.grid.tiles[first_tile(w, POSITIVE)]
    choose(w, first_tile(w, POSITIVE), "not relevant")
    table = w.corrections.panel.table
    assert table.rowCount() == 1
    cells = [table.item(0, c).text() for c in range(table.columnCount())]
    assert cells[:4] == [w.opened.dataset.queries[q].name, tile.name,
                         "relevant → not relevant", "tester"]
    w.queries.jump(0)
    assert w.current != q
    table.cellClicked.emit(0, 0)
    assert w.current == q
    table.selectRow(0)
    w.corrections.panel.delete_button.click()
    assert table.rowCount() == 0
    np.testing.assert_array_equal(w.evaluation.per_query["AP"], published)
    w.corrections.controller.stack.undo()  # the deletion is undone: the correction is back
    assert table.rowCount() == 1
    np.testing.assert_array_equal(w.evaluation.per_query["AP"], full(w).per_query["AP"])


def test_the_sidecar_is_written_after_each_change_and_read_on_reopening(qtbot, demo):
    w = make_window(qtbot, demo)
    sidecar = demo[0].with_name("demo.corrections.csv")
    assert not sidecar.exists()
    positive, negative = first_tile(w, POSITIVE), first_tile(w, NEGATIVE)
    choose(w, positive, "not relevant")
    assert [c.label for c in read_corrections(sidecar, w.corrections.controller.log.published)
            ] == ["negative"]
    choose(w, negative, "relevant")
    rows = read_corrections(sidecar, w.corrections.controller.log.published)
    assert [c.label for c in rows] == ["negative", "positive"]
    assert all(c.author == "tester" and c.time for c in rows)
    w.corrections.controller.stack.undo()
    assert len(read_corrections(sidecar, w.corrections.controller.log.published)) == 1
    corrected = w.evaluation.per_query["AP"].copy()
    w.close()

    again = make_window(qtbot, demo)
    assert len(again.corrections.controller.log) == 1
    assert "1 correction applied" in again.statusBar().currentMessage()
    np.testing.assert_array_equal(again.evaluation.per_query["AP"], corrected)
    assert "published →" in again.corrections.line.text.text()


def test_a_read_only_dataset_keeps_its_corrections_in_the_user_data_folder(
        qtbot, demo, monkeypatch):
    # a shared benchmark on a read-only mount: the corrections go to the user's data folder,
    # the status line says where, and the next opening finds them there
    from irviewer.formats.corrections_file import corrections_place
    from irviewer.io import user_data

    folder = demo[0].parent
    monkeypatch.setattr(user_data, "can_write_in", lambda f: f != folder)
    kept = corrections_place(demo[0]).path
    assert kept.parent == user_data.user_data_folder() / "corrections"
    w = make_window(qtbot, demo)
    assert w.corrections.controller.path == kept
    assert w.statusBar().currentMessage() == (
        f"The label corrections of this dataset are kept in {kept}, as its folder {folder} "
        "cannot be written")
    choose(w, first_tile(w, POSITIVE), "not relevant")
    assert [c.label for c in read_corrections(kept, w.corrections.controller.log.published)
            ] == ["negative"]
    assert not demo[0].with_name("demo.corrections.csv").exists()
    corrected = w.evaluation.per_query["AP"].copy()
    w.close()

    again = make_window(qtbot, demo)
    assert len(again.corrections.controller.log) == 1
    assert again.statusBar().currentMessage() == (
        f"{kept.name}: 1 correction applied, 1 query changed; the label corrections of this "
        f"dataset are kept in {kept}, as its folder {folder} cannot be written")
    np.testing.assert_array_equal(again.evaluation.per_query["AP"], corrected)


def test_a_bad_sidecar_gives_a_dialog_keeps_the_data_and_is_never_overwritten(qtbot, demo):
    sidecar = demo[0].with_name("demo.corrections.csv")
    sidecar.write_text("query,item,label\nno_such_query,x,negative\n")
    w = make_window(qtbot, demo)
    assert w.opened is not None and w.last_error is None
    assert "line 2" in w.corrections.last_error and "no_such_query" in w.corrections.last_error
    w.corrections.last_error = None
    choose(w, first_tile(w, POSITIVE), "not relevant")  # refused: the file holds the set
    assert len(w.corrections.controller.log) == 0
    assert "No correction can be made until it is fixed" in w.corrections.last_error
    assert sidecar.read_text() == "query,item,label\nno_such_query,x,negative\n"
    assert sorted(p.name for p in demo[0].parent.glob("*.csv")) == [
        "demo.corrections.csv", "demo.csv"]
    assert "No correction can be made" in w.corrections.panel.file.text()
    # fixed in an editor: the window reads it again and corrections can be made
    sidecar.write_text("query,item,label\n")
    w.corrections.controller.look_for_others()
    choose(w, first_tile(w, POSITIVE), "not relevant")
    assert len(read_corrections(sidecar, w.corrections.controller.log.published)) == 1


def test_a_save_that_fails_is_a_sentence_in_a_dialog(window, qtbot, monkeypatch):
    # the disk is full when the corrections are flushed: the writer thread reports it (the
    # sentence names the file), the corrections made stay, the old file is unchanged
    import errno
    import os

    w = window
    sidecar = w.corrections.controller.path
    sidecar.write_text("query,item,label\n")

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    choose(w, first_tile(w, POSITIVE), "not relevant")
    qtbot.waitUntil(lambda: w.corrections.last_error is not None)
    assert w.corrections.last_error == (
        f"The corrections could not be saved: {sidecar}: cannot write there "
        f"({os.strerror(errno.ENOSPC)}); the file is unchanged. They are kept in the window "
        "and its autosave, and saved as soon as the file can be written.")
    assert len(w.corrections.controller.log) == 1
    assert sidecar.read_text() == "query,item,label\n"
    assert w.corrections.controller.unsaved() == 1 and w.isWindowModified()
    monkeypatch.undo()  # room on the disk again: the next try saves
    qtbot.waitUntil(lambda: w.corrections.controller.unsaved() == 0)
    assert len(read_corrections(sidecar, w.corrections.controller.log.published)) == 1
    assert not w.isWindowModified()


def test_choosing_a_bad_file_keeps_the_corrections_made(window, tmp_path):
    w = window
    choose(w, first_tile(w, POSITIVE), "not relevant")
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"\x00\x01garbage")
    w.corrections.controller.choose_file(bad)
    assert "binary" in w.corrections.last_error
    assert len(w.corrections.controller.log) == 1
    assert bad.read_bytes() == b"\x00\x01garbage"
    chosen = tmp_path / "mine.csv"
    w.corrections.controller.choose_file(chosen)
    assert len(read_corrections(chosen, w.corrections.controller.log.published)) == 1


def test_the_corrected_mark_is_painted(window):
    w = window
    at = first_tile(w, NEGATIVE)
    choose(w, at, "relevant")
    grid = w.results.grid
    corrected = next(i for i, t in enumerate(grid.tiles)
                     if t.index in w.corrections.marked(w.current))
    other = next(i for i, t in enumerate(grid.tiles)
                 if t.index not in w.corrections.marked(w.current))
    image = grid.grab().toImage()

    def corner(i: int) -> QColor:
        rect = grid._rect(i)
        return image.pixelColor(rect.right() - 3, rect.top() + 3)

    assert corner(corrected) == QColor(MARK_FILL)
    assert corner(other) != QColor(MARK_FILL)
    assert "corrected (folded corner)" in w.results.legend.text()


def test_the_switch_shows_the_published_ground_truth_again(window):
    w = window
    published = w.evaluation.per_query["AP"].copy()
    published_summary = w.bar.summary.text()
    choose(w, first_tile(w, POSITIVE), "not relevant")
    corrected = w.evaluation.per_query["AP"].copy()
    w.corrections.line.switch.setChecked(True)
    np.testing.assert_array_equal(w.evaluation.per_query["AP"], published)
    assert w.bar.summary.text() == published_summary
    assert "showing the <b>published</b>" in w.corrections.line.text.text()
    w.corrections.line.switch.setChecked(False)
    np.testing.assert_array_equal(w.evaluation.per_query["AP"], corrected)


def test_keys_over_a_tile_and_in_the_comparison(window, qtbot):
    w = window
    grid = w.results.grid
    at = first_tile(w, POSITIVE)
    tile = grid.tiles[at]
    w.corrections.key_on(tuple(grid.tiles), at, "3")  # ignored
    codes = w.evaluation.relevance(w.current, np.array([tile.index]))
    assert codes.tolist() == [IGNORED]
    w.comparison.show_tile(tuple(grid.tiles), first_tile(w, NEGATIVE), sync=True)
    shown = w.comparison.tiles[w.comparison.at]
    key_1 = next(s for s in w.comparison.window.findChildren(QShortcut)
                 if s.key().toString() == "1")
    key_1.activated.emit()
    assert w.evaluation.relevance(w.current, np.array([shown.index])).tolist() == [POSITIVE]
    assert w.comparison.tiles[w.comparison.at].index == shown.index  # stays on the match
    assert w.comparison.tiles[w.comparison.at].relevance == POSITIVE
    w.comparison.window.close()


def test_relabel_dialog_previews_the_count_and_relabels(window, monkeypatch):
    from irviewer.gui.corrections import menu as correction_menu

    w = window
    at = first_tile(w, NEGATIVE)
    tile = w.results.grid.tiles[at]
    menu = w.corrections.tile_menu(tuple(w.results.grid.tiles), at, QPoint(0, 0), sync=True)
    relabel = next(a for a in menu.actions() if a.text().startswith("Relabel"))
    seen = {}

    def fake_exec(dialog):
        seen["preview"] = dialog.preview.text()
        seen["label"] = dialog.new_label()
        return True

    monkeypatch.setattr(correction_menu.RelabelDialog, "exec", fake_exec)
    relabel.trigger()
    query_label = str(w.opened.dataset.queries[w.current].meta["label"])
    assert seen["label"] == query_label
    assert "changes the ground truth of" in seen["preview"]
    log = w.corrections.controller.log
    assert len(log) == 1 and log.corrections[0].is_relabel
    assert log.corrections[0].item == tile.name and log.corrections[0].label == query_label
    assert w.evaluation.relevance(w.current, np.array([tile.index])).tolist() == [POSITIVE]
    np.testing.assert_array_equal(w.evaluation.per_query["AP"], full(w).per_query["AP"])


def test_the_session_names_the_corrections_file(window, tmp_path):
    w = window
    choose(w, first_tile(w, POSITIVE), "not relevant")
    path = tmp_path / "s.irv"
    assert w.save_session_as(path)
    assert load_session(path).corrections == w.corrections.controller.path


def test_a_table_sorted_by_ap_is_sorted_again_and_keeps_the_selection(window):
    from PySide6.QtCore import Qt

    w = window
    w.queries.table.sortByColumn(1, Qt.SortOrder.AscendingOrder)
    q = w.current
    choose(w, first_tile(w, POSITIVE), "not relevant")
    proxy = w.queries.proxy
    aps = [float(proxy.index(r, 1).data()) for r in range(proxy.rowCount())]
    assert aps == sorted(aps)
    assert w.queries.current_query() == q


def test_keys_in_the_main_window_act_on_the_tile_clicked(window, qtbot):
    w = window
    at = first_tile(w, NEGATIVE)
    tile = w.results.grid.tiles[at]
    grid = w.results.grid
    qtbot.mouseClick(grid, Qt.MouseButton.LeftButton, pos=grid._rect(at).center())
    w.corrections.key("1")
    assert w.evaluation.relevance(w.current, np.array([tile.index])).tolist() == [POSITIVE]
    assert "Ctrl+Z undoes" in w.statusBar().currentMessage()
    w.comparison.window.close()
