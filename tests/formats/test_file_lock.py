"""The corrections file's lock: many processes racing to take over a dead writer's lock
never hold it at once, a writer releases only its own lock, and a held lock is refused at
once (no wait) with who holds it."""

from __future__ import annotations

import json
import multiprocessing
import os
import socket
import time
from pathlib import Path

import pytest

from irviewer.formats.file_lock import LockHeldError, lock_path, locked

RACERS = 8
TRIALS = 60


def _dead_pid() -> int:
    dead = multiprocessing.get_context("fork").Process(target=int)
    dead.start()
    dead.join()
    return dead.pid


def _racer(path: str, log: str, start: float) -> None:
    while time.time() < start:
        pass
    with locked(Path(path), wait=30):
        fd = os.open(log, os.O_WRONLY | os.O_APPEND)
        os.write(fd, b"+")
        time.sleep(0.002)
        os.write(fd, b"-")
        os.close(fd)


def test_05_eight_processes_taking_over_a_dead_writers_lock_never_overlap(tmp_path):
    ctx = multiprocessing.get_context("fork")
    dead = _dead_pid()
    overlaps = 0
    for trial in range(TRIALS):
        path = tmp_path / f"t{trial}.corrections.csv"
        log = tmp_path / f"t{trial}.log"
        log.write_bytes(b"")
        lock_path(path).write_text(json.dumps({"pid": dead, "host": socket.gethostname(),
                                               "time": time.time()}))
        start = time.time() + 0.1
        racers = [ctx.Process(target=_racer, args=(str(path), str(log), start))
                  for _ in range(RACERS)]
        for r in racers:
            r.start()
        for r in racers:
            r.join(60)
            assert r.exitcode == 0
        sequence = log.read_bytes()
        assert len(sequence) == 2 * RACERS
        overlaps += sequence != b"+-" * RACERS
        assert not lock_path(path).exists()
        assert [p.name for p in tmp_path.iterdir() if ".lock" in p.name] == []
    assert overlaps == 0, f"the lock was held by two writers at once in {overlaps} trials"


def test_05_a_writer_taken_over_as_stale_leaves_the_new_holders_lock(tmp_path):
    path = tmp_path / "f.corrections.csv"
    lock = lock_path(path)
    with locked(path, wait=0):
        # this writer took too long: another one took the lock over and holds it now
        lock.unlink()
        lock.write_text(json.dumps({"pid": 1, "host": "elsewhere", "time": time.time(),
                                    "token": "theirs"}))
    assert json.loads(lock.read_text())["token"] == "theirs"


def test_a_held_lock_is_refused_at_once_naming_its_holder(tmp_path):
    path = tmp_path / "f.corrections.csv"
    lock = lock_path(path)
    lock.write_text(json.dumps({"pid": 77, "host": "lab-2", "user": "anna", "window": "3f2a",
                                "time": time.time()}))
    started = time.monotonic()
    with pytest.raises(LockHeldError) as e, locked(path, wait=0):
        pass
    assert time.monotonic() - started < 0.5
    assert e.value.holder == "anna's window 3f2a on lab-2 (process 77)"
    assert str(e.value).startswith("f.corrections.csv is being written by anna's window 3f2a "
                                   "on lab-2 (process 77); try again")
    assert lock.exists()
