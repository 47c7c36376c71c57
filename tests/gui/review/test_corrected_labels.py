"""The Review suspects dock judges the corrected ground truth: the audit
runs on the corrected labels whichever ground truth the window shows, a suspect whose
suggested fix is in place (by whatever correction) shows as fixed and opens again when that
correction is undone, Enter in the published view corrects the corrected ground truth, and
Enter on a fix already in place pushes nothing."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt

from irviewer.core.audit import NEG_POS, AuditResult, Suspect
from irviewer.core.corrections import Correction
from irviewer.gui.main_window import MainWindow
from irviewer.view.review_queue import ACCEPTED, OPEN
from tests.gui.review.test_review_window import INJECTED, cell, rows, synth, window

__all__ = ["synth", "window"]  # the fixtures, used by name


def corrected_label(w: MainWindow, image: str) -> str:
    ds = w.corrections.controller.log.dataset
    return str(np.asarray(ds.gallery_labels)[ds.gallery_index()[image]])


def test_the_audit_judges_the_corrected_labels_in_the_published_view(window):
    w = window
    controller = w.corrections.controller
    controller.correct("", INJECTED, "L009")  # the injected error, fixed
    w.corrections.line.switch.setChecked(True)
    assert controller.state.showing_published
    w.review.run()  # Audit labels, while the published ground truth is shown
    labelled = {s.item: s.labelled for s in w.review.queue.suspects if s.query is None}
    assert all(corrected_label(w, item) == label for item, label in labelled.items()), labelled
    assert INJECTED not in [s.item for s in w.review.queue.suspects
                            if w.review.queue.state(w.review.queue.suspects.index(s)) == OPEN]


def test_a_fix_put_in_place_by_another_correction_shows_as_fixed_until_undone(window):
    w = window
    ds = w.opened.dataset
    query = next(q for q in ds.queries if q.meta["label"] == "L009")
    g = ds.gallery_index()[INJECTED]
    # a pair suspect: INJECTED (labelled L001) looks positive for an L009 query
    pair = Suspect(NEG_POS, 0.9, query.name, INJECTED, "negative", "positive",
                   "ranks first for it under both methods", 2, 2, g,
                   ds.query_by_name(query.name), (),
                   Correction(query.name, INJECTED, "positive"))
    w.review.show_result(AuditResult((pair,), "instance", ("A.npz", "B.npz")))
    assert w.review.queue.state(0) == OPEN
    # the reviewer relabels the image instead of correcting the one pair: the pair is
    # positive now, which is the suspect's fix
    w.corrections.controller.correct("", INJECTED, "L009")
    assert w.review.queue.state(0) == ACCEPTED and cell(w, 0, 0) == "✓ fixed"
    assert w.review.panel.count.text() == "<b>1 of 1 reviewed</b>"
    stack = w.corrections.controller.stack
    count = stack.count()
    w.review.panel.select_position(0)
    w.review.accept(0)  # Enter on a fix already in place: nothing pushed
    assert stack.count() == count and len(w.corrections.controller.log) == 1
    stack.undo()
    assert w.review.queue.state(0) == OPEN and cell(w, 0, 0) == ""


def test_enter_in_the_published_view_corrects_the_corrected_ground_truth(window, qtbot):
    w = window
    controller = w.corrections.controller
    w.corrections.line.switch.setChecked(True)
    assert rows(w)[0] == INJECTED
    w.review.panel.select_position(0)
    qtbot.keyClick(w.review.panel.table, Qt.Key.Key_Return)
    assert corrected_label(w, INJECTED) == "L009"
    assert controller.stack.count() == 1 and len(controller.log) == 1
    assert w.review.queue.state(0) == ACCEPTED
