"""Two writers of one corrections file lose nothing: the three-way merge by hand, the later
of two corrections of one pair wins and the sentence says whose it replaced, the lock keeps
writers apart and a crashed writer's lock is taken over, and two processes writing at once
end with every correction of both in the file."""

from __future__ import annotations

import json
import multiprocessing
import os
import socket
import time

import pytest

from irviewer.core.corrections import Correction
from irviewer.core.errors import InputError
from irviewer.formats import file_lock
from irviewer.formats.corrections_merge import merge, read_disk, save_merged
from irviewer.formats.file_lock import is_stale, lock_path, locked


def c(query: str, item: str, label: str, author: str = "", time: str = "") -> Correction:
    return Correction(query, item, label, author, time)


A1 = c("q1", "x", "junk", "alice", "2026-11-26T10:00:00Z")
B1 = c("q2", "y", "good", "bob", "2026-11-26T10:01:00Z")


def test_rows_others_added_are_kept_and_said():
    merged = merge(base=(), ours=(A1,), disk=(B1,))
    assert merged.rows == (B1, A1)
    assert merged.added == (B1,)
    assert merged.sentence() == "1 correction by bob was added while you worked"


def test_the_later_correction_of_a_pair_wins_and_names_whose_it_replaced():
    mine = c("q1", "x", "junk", "alice", "2026-11-26T10:00:00Z")
    theirs = c("q1", "x", "negative", "bob", "2026-11-26T10:05:00Z")
    merged = merge(base=(), ours=(mine,), disk=(theirs,))
    assert merged.rows == (theirs,)
    assert merged.replaced == ((mine, theirs),)
    assert merged.sentence() == "bob replaced your correction of q1 / x: junk → negative"
    # Seen from bob's side (his is later): his stays and alice's is named.
    merged = merge(base=(), ours=(theirs,), disk=(mine,))
    assert merged.rows == (theirs,)
    assert not merged.theirs
    assert merged.sentence() == ("your later correction of q1 / x (negative) replaced "
                                 "alice's (junk), saved just before yours")
    # A pair this writer holds as it last read it, changed by another: theirs, said.
    merged = merge(base=(mine,), ours=(mine,), disk=(theirs,))
    assert merged.rows == (theirs,) and merged.replaced == ((mine, theirs),)


def test_the_writer_is_named_by_author_window_and_machine():
    mine = Correction("q1", "x", "ok", "anna", "2026-11-26T10:00:00Z", "", "anna", "lab-1", "a1")
    theirs = Correction("q1", "x", "junk", "anna", "2026-11-26T10:05:00Z", "", "anna", "lab-1",
                        "b2")
    merged = merge(base=(), ours=(mine,), disk=(theirs,))
    assert merged.sentence() == ("anna in window b2 on lab-1 replaced your correction of "
                                 "q1 / x: ok → junk")


def test_later_compares_instants_whatever_their_offsets():
    early = c("q1", "x", "junk", "alice", "2026-11-26T11:00:00+02:00")  # 09:00 UTC
    late = c("q1", "x", "negative", "bob", "2026-11-26T10:00:00Z")
    merged = merge(base=(), ours=(late,), disk=(early,))
    assert merged.rows == (late,) and not merged.theirs


def test_deletions_on_either_side_and_untouched_rows():
    # We deleted A1 (it was in the base); they added B1: A1 stays deleted, B1 comes in.
    assert merge(base=(A1,), ours=(), disk=(A1, B1)).rows == (B1,)
    # They deleted A1; we did not touch it: it goes, and the sentence says so.
    merged = merge(base=(A1, B1), ours=(A1, B1), disk=(B1,))
    assert merged.rows == (B1,) and merged.removed == (A1,)
    assert "deleted in another window" in merged.sentence()
    # We changed a row they deleted: the change wins (nothing anyone did is lost).
    changed = c("q1", "x", "good", "alice", "2026-11-26T11:00:00Z")
    assert merge(base=(A1,), ours=(changed,), disk=()).rows == (changed,)
    # Nothing changed anywhere: the file as it is.
    assert merge(base=(A1, B1), ours=(A1, B1), disk=(A1, B1)).rows == (A1, B1)


def test_two_writers_one_after_the_other_keep_both(tmp_path):
    path = tmp_path / "set.corrections.csv"
    alice = save_merged(path, (), (A1,))
    bob = save_merged(path, (), (B1,))  # bob never read alice's row
    assert set(read_disk(path)) == {A1, B1}
    assert bob.added == (A1,)
    # alice's next save keeps bob's row, and takes it in.
    a2 = c("q3", "z", "ok", "alice", "2026-11-26T10:02:00Z")
    again = save_merged(path, alice.rows, (A1, a2))
    assert set(read_disk(path)) == {A1, B1, a2}
    assert again.added == (B1,)


def test_a_held_lock_makes_the_writer_wait_then_give_up_in_one_sentence(tmp_path,
                                                                        monkeypatch):
    path = tmp_path / "f.corrections.csv"
    lock = lock_path(path)
    lock.write_text(json.dumps({"pid": 1, "host": "elsewhere", "time": time.time()}))
    with pytest.raises(InputError) as e, locked(path, wait=0.1):
        pass
    assert str(e.value).startswith("f.corrections.csv is being written by process 1 on "
                                   "elsewhere; try again")
    assert lock.exists()  # someone else's live lock is left alone


def test_a_crashed_writers_lock_is_taken_over(tmp_path, monkeypatch):
    path = tmp_path / "f.corrections.csv"
    lock = lock_path(path)
    # A process of this host that no longer runs.
    dead = multiprocessing.get_context("fork").Process(target=int)
    dead.start()
    dead.join()
    lock.write_text(json.dumps({"pid": dead.pid, "host": socket.gethostname(),
                                "time": time.time()}))
    assert is_stale(lock)
    save_merged(path, (), (A1,))
    assert read_disk(path) == (A1,) and not lock.exists()
    # A lock older than STALE_AFTER, whoever wrote it.
    lock.write_text(json.dumps({"pid": 1, "host": "elsewhere", "time": 0}))
    old = time.time() - file_lock.STALE_AFTER - 5
    os.utime(lock, (old, old))
    assert is_stale(lock)
    # A live writer's lock (this process) is not stale.
    lock.write_text(json.dumps({"pid": os.getppid(), "host": socket.gethostname(),
                                "time": time.time()}))
    assert not is_stale(lock)


def _writer(path: str, author: str, n: int) -> None:
    base: tuple[Correction, ...] = ()
    ours: list[Correction] = []
    for i in range(n):
        ours = [*base, c(f"{author}_q{i}", "x", "junk", author,
                         f"2026-11-26T10:00:{i:02d}Z")]
        base = save_merged(path, base, ours).rows


def test_two_processes_writing_at_once_lose_nothing(tmp_path):
    path = tmp_path / "shared.corrections.csv"
    ctx = multiprocessing.get_context("fork")
    workers = [ctx.Process(target=_writer, args=(str(path), who, 25))
               for who in ("alice", "bob")]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
        assert w.exitcode == 0
    rows = read_disk(path)
    assert sorted(r.query for r in rows) == sorted(f"{who}_q{i}" for who in ("alice", "bob")
                                                   for i in range(25))
    assert not lock_path(path).exists()
