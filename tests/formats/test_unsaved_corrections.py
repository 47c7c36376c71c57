"""The autosave of corrections a window could not save: written and read back whole, left
alone while its window runs, found for its corrections file once that window is gone."""

from __future__ import annotations

import json
import multiprocessing
import os

from irviewer.core.corrections import Correction
from irviewer.formats.unsaved_corrections import (
    autosave_file,
    clear_unsaved,
    detach,
    hold,
    orphaned,
    pending,
    read_unsaved,
    release,
    write_unsaved,
)

A = Correction("q1", "x", "junk", "anna", "2026-11-26T10:00:00Z", "n", "anna", "lab", "w1")
B = Correction("q2", "y", "good", "anna", "2026-11-26T10:01:00Z", "", "anna", "lab", "w1")


def test_pending_counts_what_differs_from_the_base():
    assert pending((), (A, B)) == 2
    assert pending((A,), (A, B)) == 1
    assert pending((A, B), (B,)) == 1  # a deletion
    assert pending((A,), (A,)) == 0


def test_an_autosave_reads_back_whole_and_is_an_orphan_only_once_its_window_is_gone(tmp_path):
    target = tmp_path / "demo.corrections.csv"
    hold("w1")
    source = write_unsaved("w1", target, (A,), (A, B))
    unsaved = read_unsaved(source)
    assert unsaved is not None
    assert (unsaved.path, unsaved.base, unsaved.ours, unsaved.window) == (target, (A,), (A, B),
                                                                         "w1")
    assert unsaved.count() == 1
    assert orphaned(target) == []  # a window of this process that runs
    release("w1")  # closed
    assert [u.window for u in orphaned(target)] == ["w1"]
    hold("w1")
    dead = multiprocessing.get_context("fork").Process(target=int)
    dead.start()
    dead.join()
    record = json.loads(source.read_text())
    record["pid"] = dead.pid
    source.write_text(json.dumps(record))
    assert [u.window for u in orphaned(target)] == ["w1"]  # another process's, gone
    assert orphaned(tmp_path / "other.corrections.csv") == []
    clear_unsaved("w1")
    release("w1")
    assert not autosave_file("w1").exists() and orphaned(target) == []


def test_an_unreadable_autosave_is_left_alone(tmp_path):
    source = write_unsaved("w2", tmp_path / "x.csv", (), (A,))
    source.write_text("{not json")
    assert read_unsaved(source) is None
    assert orphaned(tmp_path / "x.csv") == []
    assert os.path.exists(source)


def test_a_detached_autosave_is_an_orphan_under_a_new_id(tmp_path):
    target = tmp_path / "demo.corrections.csv"
    hold("w3")
    write_unsaved("w3", target, (), (A,))
    left = detach("w3")
    assert left is not None and not autosave_file("w3").exists()
    assert [u.ours for u in orphaned(target)] == [(A,)]
    release("w3")
