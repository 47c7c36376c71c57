"""A suspect of several queries sharing a list (Oxford's five queries of a landmark): the
queue shows it once, naming its queries; accepting fixes every list that holds the label as
one undoable step, and the status line says what Ctrl+Z undid. An image in the wrong list is
one entry naming both lists, fixed in both at once."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QStatusBar

from irviewer.core.audit import POS_NEG, WRONG_LIST, Suspect
from irviewer.core.corrections import Correction
from irviewer.core.evaluation import evaluate
from irviewer.formats.base import ReadOptions
from irviewer.gui.main_window import MainWindow
from irviewer.opening.request import OpenRequest
from irviewer.view.review_queue import ACCEPTED, OPEN, ReviewQueue
from tests.corrections_cases import make_case


def open_oxford(qtbot, tmp_path, images: bool) -> MainWindow:
    """Open an Oxford-like set whose souls_1 and souls_2 share their lists (with its image
    files, or without: the gallery named by the descriptor file)."""
    case = make_case("oxford", tmp_path / "ox")
    for group in ("good", "ok", "junk"):  # souls_2 lists what souls_1 lists
        shutil.copy(case.dataset / f"souls_1_{group}.txt", case.dataset / f"souls_2_{group}.txt")
    settings = QSettings()
    settings.setValue("corrections/author", "tester")
    w = MainWindow(top_k=20, settings=settings, keep_sessions=False)
    qtbot.addWidget(w)
    w.resize(1200, 680)
    w.show()
    w.review.sync = True
    w.open_request(OpenRequest(case.dataset, (case.descriptors,),
                               options=case.options if images else ReadOptions()), sync=True)
    w.review.open_dock()
    w.review.auditor.wait()
    return w


@pytest.fixture
def window(qtbot, tmp_path):
    w = open_oxford(qtbot, tmp_path, images=True)
    yield w
    w.review.auditor.wait()


def shared_suspect(w: MainWindow) -> Suspect:
    """Return a positive-looks-negative suspect of souls_1 and souls_2 (a shared list)."""
    ds = w.corrections.controller.log.dataset
    q1 = ds.query_by_name("souls_1")
    item = next(ds.gallery[g] for g in ds.queries[q1].group("good").tolist()
                if g != ds.queries[q1].self_index)
    fixes = tuple(Correction(q, item, "negative") for q in ("souls_1", "souls_2"))
    return Suspect(POS_NEG, 0.97, "souls_1", item, "good", "negative", "unlike its set", 1, 1,
                   ds.gallery_index()[item], q1, (), fixes[0], ("souls_1", "souls_2"), fixes,
                   3.5)


def status(w: MainWindow) -> str:
    return w.findChild(QStatusBar).currentMessage()


def test_accepting_fixes_every_list_sharing_the_label_as_one_undo_step(window):
    w = window
    ds = w.corrections.controller.log.dataset
    suspect = shared_suspect(w)
    item = suspect.item
    w.review.queue = ReviewQueue([suspect], ground_truth=ds)
    w.review.panel.set_queue(w.review.queue)
    assert w.review.panel.model.index(0, 3).data() == "souls_1 +1"
    w.review.panel.select_position(0)
    assert "souls_2: 2 sharing its list, fixed together" in w.review.panel.detail.text()
    before = w.evaluation.per_query["AP"].copy()
    w.review.accept(0)
    log = w.corrections.controller.log
    assert [(c.query, c.item, c.label) for c in log.corrections] == [
        ("souls_1", item, "negative"), ("souls_2", item, "negative")]
    assert w.corrections.controller.stack.count() == 1  # one undo step
    assert "and the same for 1 other query — Ctrl+Z undoes" in status(w)
    full = evaluate(log.dataset, w.evaluation.ranking, w.evaluation.protocol)
    np.testing.assert_allclose(w.evaluation.per_query["AP"], full.per_query["AP"], atol=1e-12)
    assert w.review.queue.state(0) == ACCEPTED
    w.corrections.controller.stack.undo()
    assert len(w.corrections.controller.log) == 0
    np.testing.assert_array_equal(w.evaluation.per_query["AP"], before)
    assert w.review.queue.state(0) == OPEN
    assert status(w).startswith("Undone: ") and "Ctrl+Shift+Z redoes" in status(w)
    w.corrections.controller.stack.redo()
    assert len(w.corrections.controller.log) == 2
    assert status(w).startswith("Redone: ")


def test_without_images_the_comparison_does_not_open_over_the_queue(qtbot, tmp_path):
    w = open_oxford(qtbot, tmp_path, images=False)
    ds = w.corrections.controller.log.dataset
    assert not ds.image_paths
    w.review.queue = ReviewQueue([shared_suspect(w)], ground_truth=ds)
    w.review.panel.set_queue(w.review.queue)
    w.review.panel.select_position(0)
    w.review.show_suspect(0)
    window = w.comparison.window
    assert window is None or not window.isVisible()
    assert "souls_1" in w.review.panel.detail.text()  # the details still say it all
    w.review.auditor.wait()


def wrong_list_suspect(w: MainWindow) -> Suspect:
    """Return an in-the-wrong-list suspect: an image bridge_1 has as a positive and souls_1
    and souls_2 do not, to be taken out of the one and put into the others."""
    ds = w.corrections.controller.log.dataset
    b1, s1 = ds.query_by_name("bridge_1"), ds.query_by_name("souls_1")
    souls = set(np.concatenate([ds.queries[s1].group(g) for g in ("good", "ok", "junk")])
                .tolist())
    item = next(ds.gallery[g] for g in ds.queries[b1].group("good").tolist()
                if g != ds.queries[b1].self_index and g not in souls)
    fixes = (Correction("souls_1", item, "good"), Correction("souls_2", item, "good"),
             Correction("bridge_1", item, "negative"))
    return Suspect(WRONG_LIST, 0.98, "souls_1", item, "good", "good", "looks like souls'", 1,
                   1, ds.gallery_index()[item], s1, (), fixes[0],
                   ("souls_1", "souls_2", "bridge_1"), fixes, 3.9)


def test_accepting_an_image_in_the_wrong_list_fixes_both_lists_as_one_undo_step(window):
    """One entry names both lists; Enter puts the image into the list it looks like and
    takes it out of the list that has it, one step on the undo stack."""
    w = window
    ds = w.corrections.controller.log.dataset
    suspect = wrong_list_suspect(w)
    w.review.queue = ReviewQueue([suspect], ground_truth=ds)
    w.review.panel.set_queue(w.review.queue)
    assert w.review.panel.model.index(0, 2).data() == "in the wrong list"
    assert w.review.panel.model.index(0, 5).data() == "good: bridge_1 → souls_1 and souls_2"
    w.review.panel.select_position(0)
    detail = w.review.panel.detail.text()
    assert "into the list of <b>souls_1 and souls_2</b> (shown: souls_1" in detail
    assert "out of the list of <b>bridge_1</b>" in detail and "both lists fixed together" in detail
    w.review.accept(0)
    log = w.corrections.controller.log
    assert [(c.query, c.item, c.label) for c in log.corrections] == [
        ("souls_1", suspect.item, "good"), ("souls_2", suspect.item, "good"),
        ("bridge_1", suspect.item, "negative")]
    assert w.corrections.controller.stack.count() == 1  # one undo step for both lists
    assert w.review.queue.state(0) == ACCEPTED
    w.corrections.controller.stack.undo()
    assert len(w.corrections.controller.log) == 0
    assert w.review.queue.state(0) == OPEN
