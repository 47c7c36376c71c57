"""The label audit's Review suspects dock in the window, on a small synthetic instance set
built here with an injected label error (L009_g2 labelled L001) and a near-duplicate
conflict: the queue lists the injected error first, Enter applies the fix through the
corrections' undo stack (the query's AP becomes what a full re-evaluation says, Ctrl+Z
restores it), Delete marks it reviewed in the reviewed file and reopening does not ask it
again, the kind filter and hiding reviewed ones."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QSettings, Qt

from irviewer.core.audit import DUPLICATE, LABEL
from irviewer.core.evaluation import evaluate
from irviewer.formats.reviewed_file import read_reviewed
from irviewer.gui.main_window import MainWindow
from irviewer.view.review_queue import ACCEPTED, CHECKED, OPEN
from tests.core.audit_synth import write_synth_set

INJECTED = "L009_g2"


@pytest.fixture
def synth(tmp_path):
    """12 instances x 6 gallery images, 2 queries each, two descriptor files; L009_g2 is
    labelled L001 in the manifest; L010_g1 is made near-identical (cos 0.995) to L011_g1."""
    s = write_synth_set(tmp_path, n_labels=12, per_label=6, queries_per_label=2,
                        n_injected=1, n_decoys=0, seed=0)
    assert s.injected == {INJECTED: ("L001", "L009")}
    for path in s.descriptors:
        z = dict(np.load(path))
        names = [str(n) for n in z["names"]]
        a, b = names.index("L011_g1"), names.index("L010_g1")
        v = z["features"][a]
        noise = np.random.default_rng(1).standard_normal(v.shape).astype(np.float32)
        noise -= noise.dot(v) / v.dot(v) * v
        z["features"][b] = v + 0.1 * np.linalg.norm(v) * noise / np.linalg.norm(noise)
        np.savez(path, **z)
    return s


def make_window(qtbot, synth) -> MainWindow:
    settings = QSettings()
    settings.setValue("corrections/author", "tester")
    w = MainWindow(top_k=20, settings=settings, keep_sessions=False)
    qtbot.addWidget(w)
    w.show()
    w.review.sync = True
    w.open_paths(synth.manifest, *synth.descriptors, sync=True)
    w.review.open_dock()
    return w


@pytest.fixture
def window(qtbot, synth):
    w = make_window(qtbot, synth)
    yield w
    w.review.auditor.wait()


def cell(w: MainWindow, row: int, column: int) -> str:
    return w.review.panel.model.index(row, column).data()


def rows(w: MainWindow) -> list[str]:
    model = w.review.panel.model
    return [cell(w, r, 4) for r in range(model.rowCount())]


def test_the_injected_error_is_listed_first_and_shown_with_its_query(window):
    w = window
    panel = w.review.panel
    assert rows(w)[0] == INJECTED
    assert cell(w, 0, 2) == "image label disagrees" and cell(w, 0, 5) == "relabel → L009"
    assert panel.count.text() == "<b>0 of 3 reviewed</b>"
    assert panel.current_position() == 0
    # its query is selected and the comparison shows the query beside the item
    query = w.opened.dataset.queries[w.current]
    assert query.meta["label"] == "L009"
    assert w.comparison.tiles[w.comparison.at].name == INJECTED
    assert "A.npz" in panel.detail.text() and "B.npz" in panel.detail.text()


def test_enter_accepts_through_the_undo_stack_and_ctrl_z_restores(window, qtbot):
    w = window
    q = w.current
    before = w.evaluation.per_query["AP"].copy()
    qtbot.keyClick(w.review.panel.table, Qt.Key.Key_Return)
    log = w.corrections.controller.log
    assert [(c.query, c.item, c.label) for c in log.corrections] == [("", INJECTED, "L009")]
    full = evaluate(log.dataset, w.evaluation.ranking, w.evaluation.protocol)
    after = w.evaluation.per_query["AP"]
    np.testing.assert_allclose(after, full.per_query["AP"], rtol=0, atol=1e-12)
    assert after[q] > before[q]
    assert w.review.queue.state(0) == ACCEPTED and cell(w, 0, 0) == "✓ fixed"
    assert w.review.panel.count.text() == "<b>1 of 3 reviewed</b>"
    assert w.review.panel.current_position() == 1  # moved on to the next open one
    w.review.panel.select_position(0)
    assert not w.review.panel.accept_button.isEnabled()
    assert not w.review.panel.check_button.isEnabled()  # accepted: nothing to confirm
    w.corrections.controller.stack.undo()  # Edit ▸ Undo (Ctrl+Z)
    assert len(w.corrections.controller.log) == 0
    np.testing.assert_array_equal(w.evaluation.per_query["AP"], before)
    assert w.review.queue.state(0) == OPEN and cell(w, 0, 0) == ""
    assert w.review.panel.count.text() == "<b>0 of 3 reviewed</b>"


def test_delete_marks_reviewed_and_reopening_does_not_ask_again(window, qtbot, synth):
    w = window
    qtbot.keyClick(w.review.panel.table, Qt.Key.Key_Delete)
    assert w.review.queue.state(0) == CHECKED and cell(w, 0, 0) == "● stands"
    assert len(w.corrections.controller.log) == 0  # nothing corrected
    path = synth.manifest.with_name("set.reviewed.csv")
    records = read_reviewed(path)
    assert [(r.kind, r.query, r.item, r.label, r.author) for r in records] == [
        (LABEL, "", INJECTED, "L001", "tester")]
    w.open_paths(synth.manifest, *synth.descriptors, sync=True)  # the dock is open: audits
    assert INJECTED not in rows(w) and len(rows(w)) == 2
    assert "1 suspect checked before" in w.review.panel.status.text()
    assert w.review.panel.count.text() == "<b>0 of 2 reviewed</b>"


def test_delete_again_asks_again(window, qtbot):
    w = window
    qtbot.keyClick(w.review.panel.table, Qt.Key.Key_Delete)
    w.review.panel.select_position(0)
    qtbot.keyClick(w.review.panel.table, Qt.Key.Key_Delete)
    assert w.review.queue.state(0) == OPEN
    assert read_reviewed(w.review.path) == ()


def test_kind_filter_and_hiding_reviewed(window, qtbot):
    w = window
    panel = w.review.panel
    texts = [panel.kind.itemText(i) for i in range(panel.kind.count())]
    assert texts == ["all kinds (3)", "near-duplicate conflict (1)",
                     "image label disagrees (2)"]
    panel.kind.setCurrentIndex(1)
    assert [cell(w, r, 2) for r in range(panel.model.rowCount())] == [
        "near-duplicate conflict"]
    assert w.review.queue.suspects[panel.model.position(0)].kind == DUPLICATE
    assert panel.count.text() == "<b>0 of 1 reviewed</b>"
    panel.kind.setCurrentIndex(0)  # every kind again; the duplicate stays selected
    assert panel.model.rowCount() == 3 and cell(w, panel.table.currentIndex().row(), 4) == (
        "L010_g1")
    panel.select_position(0)
    qtbot.keyClick(panel.table, Qt.Key.Key_Delete)
    panel.hide_reviewed.setChecked(True)
    assert INJECTED not in rows(w) and len(rows(w)) == 2
    panel.hide_reviewed.setChecked(False)
    assert rows(w)[0] == INJECTED


def test_arrows_move_and_show_each_suspect(window, qtbot):
    w = window
    qtbot.keyClick(w.review.panel.table, Qt.Key.Key_Down)
    assert w.review.panel.current_position() == 1
    item = w.review.queue.suspects[1].item
    assert w.comparison.tiles[w.comparison.at].name == item
    qtbot.keyClick(w.review.panel.table, Qt.Key.Key_Up)
    assert w.review.panel.current_position() == 0


def test_in_the_background_a_new_request_cancels_the_old_one(window, qtbot):
    w = window
    w.review.sync = False
    results = []
    w.review.auditor.done.connect(results.append)
    w.review.run()
    first = w.review.auditor.generation
    with qtbot.waitSignal(w.review.auditor.done, timeout=60000):
        w.review.run()  # the first is stale: only this one reports
    w.review.auditor.wait()
    qtbot.wait(50)
    assert w.review.auditor.generation == first + 1 and len(results) == 1
    assert rows(w)[0] == INJECTED and not w.review.auditor.running
    w.review.run()
    w.review.run_or_cancel()  # Cancel audit
    assert not w.review.auditor.running and "cancelled" in w.review.panel.status.text()
    w.review.auditor.wait()
