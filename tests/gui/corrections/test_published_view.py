"""Corrections while the window shows the published ground truth: an
edit always applies to the corrected ground truth (the menu says so, and the view switches
to the corrected one to show its effect), a correction that would set what the corrected
ground truth already has is neither put on the undo stack nor written to the sidecar, and
a relation the published labels already show is accepted when the corrected ground truth
differs."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPoint

from irviewer.core.evaluation import NEGATIVE, POSITIVE
from irviewer.gui.main_window import MainWindow
from irviewer.view.corrections import relation
from tests.gui.corrections.test_corrections_window import (
    choose,
    demo,
    first_tile,
    full,
    make_window,
)

__all__ = ["demo"]  # the fixture, used by name


def corrected_relation(w: MainWindow, tile_index: int) -> str:
    log = w.corrections.controller.log
    return relation(log.dataset, w.current, tile_index)


def published_view_with_one_correction(w: MainWindow) -> tuple[int, int]:
    """Correct a positive tile to "not relevant", then show the published ground truth;
    return (the tile's place in the grid, its gallery position)."""
    at = first_tile(w, POSITIVE)
    g = w.results.grid.tiles[at].index
    choose(w, at, "not relevant")
    w.corrections.line.switch.setChecked(True)
    assert w.corrections.controller.state.showing_published
    # the published view shows the tile as the benchmark labels it: relevant
    at = next(i for i, t in enumerate(w.results.grid.tiles) if t.index == g)
    assert w.results.grid.tiles[at].relevance == POSITIVE
    return at, g


def test_a_gesture_in_the_published_view_edits_the_corrected_ground_truth(qtbot, demo):
    w = make_window(qtbot, demo)
    at, g = published_view_with_one_correction(w)
    stack = w.corrections.controller.stack
    assert stack.count() == 1
    # the published labels say relevant, the corrected ones not relevant: choosing
    # "relevant" is a real change of the corrected ground truth
    choose(w, at, "relevant")
    assert corrected_relation(w, g) == "positive"
    assert stack.count() == 2 and stack.undoText().endswith("negative → positive")
    assert all(e.before != e.correction.label for e in w.corrections.controller.log.entries)
    # the view switched to the corrected ground truth, which now agrees with the published
    assert not w.corrections.controller.state.showing_published
    assert not w.corrections.line.switch.isChecked()
    np.testing.assert_array_equal(w.evaluation.per_query["AP"], full(w).per_query["AP"])
    stack.undo()
    assert corrected_relation(w, g) == "negative"


def test_setting_what_the_corrected_ground_truth_has_is_not_pushed_nor_written(qtbot, demo):
    w = make_window(qtbot, demo)
    at, g = published_view_with_one_correction(w)
    controller = w.corrections.controller
    sidecar = controller.path
    data, mtime = sidecar.read_bytes(), sidecar.stat().st_mtime_ns
    # the corrected ground truth already says "not relevant": nothing to do
    choose(w, at, "not relevant")
    assert controller.stack.count() == 1 and len(controller.log) == 1
    assert sidecar.read_bytes() == data and sidecar.stat().st_mtime_ns == mtime
    assert "already not relevant" in w.statusBar().currentMessage()
    assert "corrected ground truth" in w.statusBar().currentMessage()
    # the same with the keys 1–4 over the tile (2 = not relevant)
    w.corrections.key_on(tuple(w.results.grid.tiles), at, "2")
    assert controller.stack.count() == 1 and len(controller.log) == 1
    assert sidecar.read_bytes() == data and sidecar.stat().st_mtime_ns == mtime
    assert corrected_relation(w, g) == "negative"


def test_a_relation_correct_in_the_corrected_ground_truth_is_accepted_by_key(qtbot, demo):
    w = make_window(qtbot, demo)
    at, g = published_view_with_one_correction(w)
    negative_at = first_tile(w, NEGATIVE)
    # key 1 (relevant) over the tile the published labels show as relevant
    w.corrections.key_on(tuple(w.results.grid.tiles), at, "1")
    assert corrected_relation(w, g) == "positive"
    assert w.corrections.controller.stack.count() == 2
    assert "Ctrl+Z undoes" in w.statusBar().currentMessage()
    # an untouched tile: the edit applies too
    w.corrections.line.switch.setChecked(True)
    tile = w.results.grid.tiles[negative_at]
    w.corrections.key_on(tuple(w.results.grid.tiles), negative_at, "1")
    assert corrected_relation(w, tile.index) == "positive"
    assert w.corrections.controller.stack.count() == 3


def test_the_published_views_menu_says_edits_go_to_the_corrected_ground_truth(qtbot, demo):
    w = make_window(qtbot, demo)
    at, _g = published_view_with_one_correction(w)
    menu = w.corrections.tile_menu(tuple(w.results.grid.tiles), at, QPoint(0, 0), sync=True)
    texts = [a.text() for a in menu.actions()]
    assert any("corrected ground truth" in t for t in texts), texts
    ticked = [a.text().split("  ", 1)[-1] for a in menu.actions() if a.isChecked()]
    assert ticked == ["not relevant"]  # the corrected relation, the one an edit changes
    published = [t for t in texts if "published" in t.lower() and "relevant" in t]
    assert published, texts  # and what the published labels say


def test_a_sidecar_row_that_sets_nothing_is_named_and_not_applied(qtbot, demo):
    from irviewer.core.evaluation import evaluate

    w = make_window(qtbot, demo)
    ds = w.opened.dataset
    q = w.current
    positive = ds.gallery[int(ds.queries[q].group("positive")[0])]
    negative = next(n for n in ds.gallery if n not in
                    {ds.gallery[i] for i in ds.queries[q].group("positive")})
    w.close()
    demo[0].with_name("demo.corrections.csv").write_text(
        "query,item,label\n"
        f"{ds.queries[q].name},{positive},negative\n"
        f"{ds.queries[q].name},{negative},negative\n", encoding="utf-8")
    again = make_window(qtbot, demo)
    assert len(again.corrections.controller.log) == 1
    message = again.statusBar().currentMessage()
    assert "1 correction applied" in message
    assert "line 3 sets what the ground truth already has: not applied" in message
    ev = again.evaluation
    np.testing.assert_array_equal(
        ev.per_query["AP"],
        evaluate(again.corrections.controller.log.dataset, ev.ranking,
                 ev.protocol).per_query["AP"])
