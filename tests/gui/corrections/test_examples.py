"""An annotator's corrections in the window, example by example: a refused corrections file
changes nothing (01); the window whose correction is replaced and the one replacing it both
say so, naming the writer (03); a held lock never freezes the window, an unsaved correction
is marked, kept in the autosave and saved when the lock is free, and closing asks (04);
keys 1–4 act on the selected tile (09); a tooltip follows the tiles when they re-flow (10);
a long status line is elided, whole on hover (11); the panel says where corrections will
go until the file exists (13). The command line's examples (02, 05–08, 12) are in
tests/cli/test_corrections_examples.py and tests/formats/test_file_lock.py."""

from __future__ import annotations

import json
import os
import socket
import time

import numpy as np
from PySide6.QtCore import QEvent, QPoint, QPointF, QSettings, Qt
from PySide6.QtGui import QHelpEvent, QMouseEvent
from PySide6.QtWidgets import QApplication, QToolTip

from irviewer.core.evaluation import NEGATIVE, POSITIVE
from irviewer.formats.corrections_file import read_corrections
from irviewer.formats.corrections_merge import read_disk
from irviewer.formats.file_lock import lock_path
from irviewer.gui.main_window import MainWindow
from tests.gui.corrections.test_corrections_window import (  # noqa: F401
    choose,
    demo,
    first_tile,
)

SIDE = "demo.corrections.csv"


def window(qtbot, paths, author: str = "anna", ini: str = "a.ini", tmp=None) -> MainWindow:
    settings = QSettings(str(tmp / ini), QSettings.Format.IniFormat)
    settings.setValue("corrections/author", author)
    w = MainWindow(top_k=20, settings=settings, keep_sessions=False)
    qtbot.addWidget(w)
    w.show()
    w.open_paths(*paths, sync=True)
    w.queries.jump(3)
    return w


def make(w: MainWindow, n: int) -> list[tuple[str, str]]:
    """Make ``n`` corrections (the first positive of queries 0..n-1 made negative)."""
    ds = w.corrections.controller.log.dataset
    made = []
    for q in range(n):
        item = ds.gallery[int(ds.queries[q].group("positive")[0])]
        assert w.corrections.controller.correct(ds.queries[q].name, item, "negative")
        made.append((ds.queries[q].name, item))
    return made


def pairs(rows) -> set[tuple[str, str, str]]:
    return {(c.query, c.item, c.label) for c in rows}


def test_01_a_refused_corrections_file_changes_nothing(qtbot, demo, tmp_path):  # noqa: F811
    """File ▸ Corrections file… with a file holding a label typo: the dialog names its
    line, the 9 corrections made stay (in the window and in their file), no "deleted by
    another window" appears, the panel names the file in use (which exists), the next
    correction goes into that file, and reopening shows all 10."""
    w = window(qtbot, demo, tmp=tmp_path)
    made = make(w, 9)
    sidecar = demo[0].with_name(SIDE)
    mean_before = float(np.nanmean(w.evaluation.per_query["AP"]))
    typo = tmp_path / "typo.csv"
    typo.write_text(f"query,item,label\n{made[0][0]},{made[0][1]},negatve\n", encoding="utf-8")
    w.corrections.controller.choose_file(typo)
    assert "typo.csv, line 2: 'negatve' is not a group" in w.corrections.last_error
    assert "Nothing was changed" in w.corrections.last_error
    assert w.corrections.controller.path == sidecar
    assert len(w.corrections.controller.log) == 9
    assert float(np.nanmean(w.evaluation.per_query["AP"])) == mean_before
    w.corrections.controller.look_for_others()  # what the watch timer does
    assert "deleted" not in w.statusBar().currentMessage()
    assert len(w.corrections.controller.log) == 9
    assert w.corrections.panel.file.text() == f"Saved to {sidecar}"
    assert sorted(p.name for p in demo[0].parent.glob("*.csv")) == [
        "demo.corrections.csv", "demo.csv", "typo.csv"]  # no spare file beside them
    choose(w, first_tile(w, POSITIVE), "not relevant")
    assert len(read_corrections(sidecar, w.corrections.controller.log.published)) == 10
    assert typo.read_text(encoding="utf-8").endswith("negatve\n")
    again = window(qtbot, demo, ini="b.ini", tmp=tmp_path)
    assert len(again.corrections.controller.log) == 10


def test_03_both_windows_say_whose_correction_replaced_whose(qtbot, demo, tmp_path):  # noqa: F811
    """Two windows of one annotator: B sets junk over A's not relevant. B's status says
    what it replaced and whose (window and machine), from the value A set; A's says that B's
    window replaced its correction; the file names the user, machine and window of each."""
    a = window(qtbot, demo, tmp=tmp_path)
    b = window(qtbot, demo, ini="b.ini", tmp=tmp_path)
    at = first_tile(a, POSITIVE)
    tile = a.results.grid.tiles[at]
    q = a.opened.dataset.queries[a.current].name
    choose(a, at, "not relevant")
    # B never looked at the file since A wrote it: its correction starts from A's value
    b_at = next(i for i, t in enumerate(b.results.grid.tiles) if t.index == tile.index)
    choose(b, b_at, "ignored")
    a_id, b_id = (w.corrections.controller.file.window for w in (a, b))
    host = socket.gethostname()
    said_b = b.statusBar().currentMessage()
    assert said_b.startswith(f"{q} / {tile.name}: negative → junk, replacing the correction "
                             f"made by anna in window {a_id} on {host}")
    a.corrections.controller.look_for_others()
    said_a = a.statusBar().currentMessage()
    assert said_a.startswith(f"anna in window {b_id} on {host} replaced your correction of "
                             f"{q} / {tile.name}: negative → junk")
    row = read_disk(demo[0].with_name(SIDE))[0]
    assert (row.label, row.author, row.user, row.machine, row.window) == (
        "junk", "anna", row.user, host, b_id) and row.user


def _hold(lock, window_id: str = "zz9") -> None:
    """Make ``lock`` held by a live writer (this test's own process, another window)."""
    lock.write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                                "user": "bob", "window": window_id, "time": time.time()}))


def test_04_a_held_lock_never_freezes_the_window(qtbot, demo, tmp_path):  # noqa: F811
    """Another writer holds the file's lock: the correction is made at once (no wait), is
    marked unsaved (line, panel, title) with who holds the lock, sits in the autosave, and
    is saved as soon as the lock is free; closing with an unsaved correction asks Save /
    Discard / Cancel, and Save with the lock still held leaves it in the autosave, which the
    next window saves once the first is gone."""
    from irviewer.formats import unsaved_corrections

    w = window(qtbot, demo, tmp=tmp_path)
    sidecar = demo[0].with_name(SIDE)
    lock = lock_path(sidecar)
    _hold(lock)
    started = time.monotonic()
    choose(w, first_tile(w, POSITIVE), "not relevant")
    assert time.monotonic() - started < 1.0
    c = w.corrections
    assert len(c.controller.log) == 1 and c.controller.unsaved() == 1
    assert w.isWindowModified() and c.line.mark.text() == "⚠ 1 unsaved"
    assert c.panel.file.text().startswith(
        f"Not saved yet: 1 correction is not in {sidecar} — {SIDE} is being written by bob's "
        f"window zz9 on {socket.gethostname()} (process {os.getpid()})")
    autosave = unsaved_corrections.autosave_file(c.controller.file.window)
    assert len(json.loads(autosave.read_text())["ours"]) == 1
    assert not sidecar.exists()
    lock.unlink()
    qtbot.waitUntil(lambda: c.controller.unsaved() == 0, timeout=5000)
    assert len(read_disk(sidecar)) == 1 and not autosave.exists()
    assert not w.isWindowModified() and not c.line.mark.isVisible()
    assert c.panel.file.text() == f"Saved to {sidecar}"
    # held again; closing asks, Cancel keeps the window open
    _hold(lock)
    choose(w, first_tile(w, POSITIVE), "not relevant")
    asked = []
    c.ask_unsaved = lambda n, why: asked.append((n, why)) or "cancel"
    assert not w.close() and w.isVisible() and asked[0][0] == 1
    c.ask_unsaved = lambda n, why: "save"  # still held: it stays in the autosave
    assert w.close()
    kept = json.loads(autosave.read_text())
    assert len(kept["ours"]) == 2 and len(read_disk(sidecar)) == 1
    # that window's process is gone (as after quitting): the next window saves its work
    kept["pid"] = _dead_pid()
    autosave.write_text(json.dumps(kept))
    lock.unlink()
    again = window(qtbot, demo, ini="b.ini", tmp=tmp_path)
    assert len(read_disk(sidecar)) == 2 and not autosave.exists()
    assert len(again.corrections.controller.log) == 2


def _dead_pid() -> int:
    import multiprocessing

    dead = multiprocessing.get_context("fork").Process(target=int)
    dead.start()
    dead.join()
    return dead.pid


def _move(grid, pos: QPoint) -> None:
    QApplication.sendEvent(grid, QMouseEvent(
        QEvent.Type.MouseMove, QPointF(pos), QPointF(grid.mapToGlobal(pos)),
        Qt.MouseButton.NoButton, Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier))


def test_09_keys_act_on_the_selected_tile_not_the_one_under_the_mouse(qtbot, demo, tmp_path):  # noqa: F811
    """Click a result (selected, ringed), then move the mouse over another and press 1: the
    selected one is set relevant, the other is untouched."""
    w = window(qtbot, demo, tmp=tmp_path)
    grid = w.results.grid
    chosen = first_tile(w, NEGATIVE)
    other = next(i for i, t in enumerate(grid.tiles) if i != chosen and t.relevance == NEGATIVE)
    chosen_index, other_index = grid.tiles[chosen].index, grid.tiles[other].index
    qtbot.mouseClick(grid, Qt.MouseButton.LeftButton, pos=grid._rect(chosen).center())
    w.comparison.window.close()
    grid.setAttribute(Qt.WidgetAttribute.WA_UnderMouse, True)  # the mouse is over the grid,
    _move(grid, grid._rect(other).center())  # resting on another tile
    w.corrections.key("1")
    relevance = w.evaluation.relevance(w.current, [chosen_index, other_index]).tolist()
    assert relevance == [POSITIVE, NEGATIVE]


def test_10_a_tooltip_follows_the_tiles_when_they_re_flow(qtbot, demo, tmp_path):  # noqa: F811
    """The mouse rests on a tile and its tooltip shows; the list re-flows (an item made
    ignored leaves it): the tooltip names the tile now under the mouse."""
    w = window(qtbot, demo, tmp=tmp_path)
    grid = w.results.grid
    pos = grid._rect(0).center()
    _move(grid, pos)
    QApplication.sendEvent(grid, QHelpEvent(QEvent.Type.ToolTip, pos, grid.mapToGlobal(pos)))
    first, second = grid.tiles[0], grid.tiles[1]
    assert QToolTip.isVisible() and first.name in QToolTip.text()
    choose(w, 0, "ignored")  # hidden: the tiles after it move up
    assert grid.tiles[0].name == second.name
    assert not QToolTip.isVisible() or (second.name in QToolTip.text()
                                        and first.name not in QToolTip.text())
    QToolTip.hideText()


def test_11_a_long_status_line_is_elided_and_whole_on_hover(qtbot, demo, tmp_path):  # noqa: F811
    """A status message wider than the window ends in "…" where it is cut, and the whole
    message is the status bar's tooltip; a short one has no tooltip."""
    w = window(qtbot, demo, tmp=tmp_path)
    bar = w.statusBar()
    long = "the corrections of this dataset are kept in " + "/very/long/folder" * 40
    w.show_message(long)
    shown = bar.shown_text()
    assert shown.endswith("…") and len(shown) < len(long)
    assert bar.fontMetrics().horizontalAdvance(shown) <= bar.width()
    assert bar.toolTip() == long
    w.show_message("Ready")
    assert bar.shown_text() == "Ready" and bar.toolTip() == ""


def test_13_the_panel_says_where_corrections_will_go_until_the_file_exists(qtbot, demo,  # noqa: F811
                                                                          tmp_path):
    """Before the first correction the file does not exist, and the panel says where it
    will be made (never "Saved to" a file that is not there); after it, "Saved to"."""
    w = window(qtbot, demo, tmp=tmp_path)
    sidecar = demo[0].with_name(SIDE)
    assert not sidecar.exists()
    text = w.corrections.panel.file.text()
    assert text == f"Corrections will be saved to {sidecar}, created with the first one"
    choose(w, first_tile(w, POSITIVE), "not relevant")
    assert sidecar.is_file() and w.corrections.panel.file.text() == f"Saved to {sidecar}"


def test_04_other_data_opened_over_unsaved_corrections_loses_none(qtbot, demo, tmp_path):  # noqa: F811
    """The lock is held and the window opens other data: the unsaved correction stays in
    the autosave (a dialog says so), and opening the demo again once the lock is free saves
    it and shows it."""
    from tests.corrections_cases import make_case

    w = window(qtbot, demo, tmp=tmp_path)
    sidecar = demo[0].with_name(SIDE)
    lock = lock_path(sidecar)
    _hold(lock)
    choose(w, first_tile(w, POSITIVE), "not relevant")
    other = make_case("manifest", tmp_path / "other")
    w.open_paths(other.dataset, other.descriptors, sync=True)
    assert w.corrections.last_error.startswith(
        f"1 correction not saved to {sidecar} (is kept in irviewer's autosave")
    assert not sidecar.exists()
    lock.unlink()
    w.open_paths(*demo, sync=True)
    assert len(read_disk(sidecar)) == 1 and len(w.corrections.controller.log) == 1
    window_id = w.corrections.controller.file.window
    assert w.statusBar().currentMessage() == (
        f"1 correction that window {window_id} could not save was recovered from irviewer's "
        f"autosave and saved to {SIDE}")
