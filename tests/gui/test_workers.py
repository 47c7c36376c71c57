"""The window's one mechanism for work off the GUI thread (irviewer.gui.workers): a job is a
generator; a newest-only worker drops stale requests, an every-job worker reports them all."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass

from irviewer.core.errors import InputError
from irviewer.gui.workers import Worker, call


@dataclass
class Step:
    stage: str
    done: int
    total: int


def counting(n: int, closed: threading.Event | None = None,
             gate: threading.Event | None = None,
             started: threading.Event | None = None) -> Iterator[Step]:
    if started is not None:
        started.set()
    try:
        for i in range(n):
            if gate is not None:
                gate.wait(5)
            yield Step("counting", i, n)
        return n
    finally:
        if closed is not None:
            closed.set()


def recorder(worker: Worker) -> dict[str, list[object]]:
    got: dict[str, list[object]] = {"progress": [], "done": [], "failed": [], "busy": []}
    worker.progress.connect(lambda *a: got["progress"].append(a))
    worker.done.connect(got["done"].append)
    worker.failed.connect(got["failed"].append)
    worker.busy.connect(got["busy"].append)
    return got


def test_a_synchronous_job_reports_its_steps_and_its_result(qtbot):
    worker = Worker()
    got = recorder(worker)
    worker.start(lambda: counting(3), "no memory", sync=True)
    assert got["progress"] == [("counting", 0, 3), ("counting", 1, 3), ("counting", 2, 3)]
    assert got["done"] == [3] and got["busy"] == [True, False] and not worker.running


def test_a_plain_function_is_a_job_of_no_steps(qtbot):
    worker = Worker()
    got = recorder(worker)
    worker.run(lambda: "answer", "no memory", sync=True)
    assert got == {"progress": [], "done": ["answer"], "failed": [], "busy": [True, False]}
    assert list(call(lambda: 1)) == []


def test_failures_are_one_sentence_each(qtbot):
    worker = Worker()
    got = recorder(worker)

    def bad_input() -> None:
        raise InputError("photo.jpg is not an image")

    def no_memory() -> None:
        raise MemoryError

    def bug() -> None:
        raise KeyError("x")

    for function in (bad_input, no_memory, bug):
        worker.run(function, "not enough memory for this", sync=True)
    assert got["failed"] == ["photo.jpg is not an image", "not enough memory for this",
                             "internal error (a bug, please report it): KeyError: 'x'"]
    assert got["done"] == [] and not worker.running


def long_job_started(worker: Worker) -> tuple[threading.Event, threading.Event]:
    """Start a long job on ``worker`` and return once it runs: (the event set when its
    generator is closed, the gate that lets it step on)."""
    closed, gate, started = threading.Event(), threading.Event(), threading.Event()
    worker.start(lambda: counting(1000, closed, gate, started), "no memory")
    assert started.wait(5)
    return closed, gate


def test_a_newer_request_makes_the_older_stale_and_closes_its_generator(qtbot):
    worker = Worker()
    got = recorder(worker)
    closed, gate = long_job_started(worker)
    worker.start(lambda: counting(2), "no memory")
    gate.set()
    qtbot.waitUntil(lambda: got["done"] == [2])
    assert closed.wait(5)  # the stale generator's finally ran, at its next step
    worker.wait()
    assert got["done"] == [2] and got["failed"] == []
    assert all(total == 2 for _stage, _done, total in got["progress"])


def test_cancel_stops_the_job_and_nothing_it_makes_arrives(qtbot):
    worker = Worker()
    got = recorder(worker)
    closed, gate = long_job_started(worker)
    worker.cancel()
    assert got["busy"] == [True, False]
    gate.set()
    assert closed.wait(5)
    worker.wait()
    qtbot.wait(50)
    assert got["done"] == [] and got["failed"] == []


def test_finish_lets_the_newest_request_run_to_its_result(qtbot):
    worker = Worker()
    got = recorder(worker)
    worker.start(lambda: counting(3), "no memory")
    worker.finish()
    qtbot.waitUntil(lambda: got["done"] == [3])
    assert not worker.running


def test_a_stale_request_still_queued_never_starts(qtbot):
    worker = Worker(threads=1)
    started: list[int] = []
    gate = threading.Event()

    def job(i: int) -> int:
        started.append(i)
        gate.wait(5)
        return i

    got = recorder(worker)
    worker.run(lambda: job(0), "no memory")
    qtbot.waitUntil(lambda: started == [0])
    for i in (1, 2):
        worker.run(lambda i=i: job(i), "no memory")
    gate.set()
    qtbot.waitUntil(lambda: got["done"] == [2])
    worker.wait()
    assert started == [0, 2]  # 0 was running; 1 was queued when 2 came, and never ran


def test_an_every_job_worker_reports_every_job_in_order(qtbot):
    worker = Worker(every=True)
    got = recorder(worker)
    for i in range(5):
        worker.run(lambda i=i: i, "no memory")
    worker.wait()  # every job finishes
    qtbot.waitUntil(lambda: len(got["done"]) == 5)
    assert got["done"] == [0, 1, 2, 3, 4] and got["busy"] == [True, False]
