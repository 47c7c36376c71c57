"""Two windows correcting one dataset lose nothing: every correction of both is in the file
and in both windows (re-scored), one after the other and interleaved; a pair both corrected
keeps the later one, and the status line names whose it replaced."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QStatusBar

from irviewer.core.evaluation import evaluate
from irviewer.formats.corrections_merge import read_disk
from irviewer.gui.main_window import MainWindow
from tests.gui.corrections.test_corrections_window import demo  # noqa: F401

SIDE = "demo.corrections.csv"


@pytest.fixture
def make_window(qtbot, tmp_path):
    """Return a function opening the demo copy in a new window of its own author (each
    window its own settings, as two annotators' machines have)."""
    def make(paths, author: str) -> MainWindow:
        settings = QSettings(str(tmp_path / f"{author}.ini"), QSettings.Format.IniFormat)
        settings.setValue("corrections/author", author)
        w = MainWindow(top_k=20, settings=settings, keep_sessions=False)
        qtbot.addWidget(w)
        w.show()
        w.open_paths(*paths, sync=True)
        return w
    return make


def positives(w, q: int) -> list[str]:
    ds = w.corrections.controller.log.dataset
    return [ds.gallery[i] for i in ds.queries[q].group("positive").tolist()]


def keys(w) -> set[tuple[str, str, str]]:
    return {(c.query, c.item, c.label) for c in w.corrections.controller.log.saved()}


def status(w) -> str:
    return w.findChild(QStatusBar).currentMessage()


def assert_scored(w) -> None:
    ev = w.evaluation
    fresh = evaluate(w.corrections.controller.log.dataset, ev.ranking, ev.protocol)
    np.testing.assert_allclose(ev.per_query["AP"], fresh.per_query["AP"])


def test_two_windows_one_after_the_other_keep_every_correction(qtbot, demo, make_window):  # noqa: F811
    alice = make_window(demo, "alice")
    bob = make_window(demo, "bob")
    ds = alice.corrections.controller.log.dataset
    q0, q1 = ds.queries[0].name, ds.queries[1].name
    a_item, b_item = positives(alice, 0)[0], positives(alice, 1)[0]
    assert alice.corrections.controller.correct(q0, a_item, "negative")
    assert bob.corrections.controller.correct(q1, b_item, "negative")  # bob never read alice's
    on_disk = {(c.query, c.item, c.label) for c in read_disk(demo[0].with_name(SIDE))}
    assert on_disk == {(q0, a_item, "negative"), (q1, b_item, "negative")}
    assert keys(bob) == on_disk
    alice_window = alice.corrections.controller.file.window
    assert (f"1 correction by alice in window {alice_window} on "
            f"{alice.corrections.controller.file.machine} was added while you worked"
            in status(bob))
    alice.corrections.controller.look_for_others()  # what the watch timer does
    assert keys(alice) == on_disk
    assert "1 correction by bob in window " in status(alice)
    assert "was added while you worked" in status(alice)
    for w in (alice, bob):
        assert_scored(w)
    # alice's own correction is still hers to undo, after bob's came in.
    alice.corrections.controller.stack.undo()
    assert keys(alice) == {(q1, b_item, "negative")}
    bob.corrections.controller.look_for_others()
    assert keys(bob) == {(q1, b_item, "negative")}


def test_the_watch_timer_brings_in_another_windows_corrections(qtbot, demo, make_window):  # noqa: F811
    alice = make_window(demo, "alice")
    bob = make_window(demo, "bob")
    ds = alice.corrections.controller.log.dataset
    item = positives(alice, 2)[0]
    bob.corrections.controller.correct(ds.queries[2].name, item, "negative")
    alice.corrections.controller.watch.setInterval(50)
    qtbot.waitUntil(lambda: keys(alice) == keys(bob), timeout=5000)
    assert_scored(alice)


def test_interleaved_corrections_and_a_conflict_keep_the_later(qtbot, demo, make_window):  # noqa: F811
    alice = make_window(demo, "alice")
    bob = make_window(demo, "bob")
    ds = alice.corrections.controller.log.dataset
    made = set()
    for i in range(4):  # alternate without either window looking in between
        who = alice if i % 2 == 0 else bob
        q = ds.queries[i].name
        item = positives(alice, i)[-1]
        assert who.corrections.controller.correct(q, item, "negative")
        made.add((q, item, "negative"))
    for w in (alice, bob):
        w.corrections.controller.look_for_others()
        assert keys(w) == made
    # The same pair, alice first, then bob: bob's (later) stays in both windows.
    q, item = ds.queries[5].name, positives(alice, 5)[0]
    alice.corrections.controller.correct(q, item, "negative")
    bob.corrections.controller.correct(q, item, "negative")  # same: nothing to merge
    groups = [g for g in ds.groups if g not in ("positive",)]
    other = groups[0] if groups else "negative"
    if other != "negative":
        bob.corrections.controller.correct(q, item, other)
        alice.corrections.controller.look_for_others()
        assert (q, item, other) in keys(alice)
        bob_window = bob.corrections.controller.file.window
        assert f"bob in window {bob_window} on " in status(alice)
        assert f"replaced your correction of {q} / {item}: negative → {other}" in status(alice)
    for w in (alice, bob):
        assert keys(w) == {(c.query, c.item, c.label)
                           for c in read_disk(demo[0].with_name(SIDE))}
        assert_scored(w)
