"""FAISS's child process, from irviewer's side: :class:`FaissProcess` starts
:func:`irviewer.core.ann.faiss_child.serve` with ``spawn`` (as the indexer's workers are, so
that the desktop app starts it as itself), sends it requests and turns its replies, and its
death, into :class:`ChildFailedError`; :func:`memory_limit` is the address space it gets.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import time
import weakref
from collections.abc import Generator
from typing import Any

import numpy as np

from irviewer.core.ann.faiss_child import serve

#: Address space the child may use beyond the memory it needs for the index (its
#: interpreter, libraries and threads reserve more than they use).
HEADROOM = 3 * 2**30
#: Seconds between two looks at a child that is working (a step of progress).
POLL_SECONDS = 0.2


class ChildFailedError(Exception):
    """What went wrong in FAISS's child process: ``kind`` is ``"missing"``, ``"memory"``,
    ``"param"``, ``"faiss"``, ``"crash"``, ``"start"`` (it ended before it could import
    FAISS) or ``"timeout"``, ``text`` FAISS's message, the parameter's name or the crash's
    reason."""

    def __init__(self, kind: str, text: str = "") -> None:
        super().__init__(f"{kind}: {text}")
        self.kind, self.text = kind, text


class FaissProcess:
    """FAISS in a child process (:func:`irviewer.core.ann.faiss_child.serve`) under an
    address-space limit of ``limit`` bytes (None: none). One request at a time:
    :meth:`ask` (or :meth:`iter_ask`, which yields while the child works) sends one and
    returns its reply's value; FAISS's warnings collect in :attr:`warnings`. The child ends
    with :meth:`close`, or when this object is collected."""

    def __init__(self, limit: int | None) -> None:
        context = multiprocessing.get_context("spawn")
        self._conn, child = context.Pipe()
        self._process = context.Process(target=serve, args=(child, limit), daemon=True,
                                        name="irviewer-faiss")
        self._process.start()
        child.close()
        self.limit = limit
        self.warnings: list[str] = []
        self._ready = False
        self._stop = weakref.finalize(self, _stop, self._process, self._conn)

    @property
    def pid(self) -> int | None:
        """Return the child's process id."""
        return self._process.pid

    def send(self, operation: str, *arguments: Any, vectors: np.ndarray | None = None
             ) -> None:
        """Send a request (``vectors``, float32, follow it as bytes)."""
        try:
            if vectors is None:
                self._conn.send((operation, *arguments))
            else:
                block = np.ascontiguousarray(vectors, dtype=np.float32)
                self._conn.send((operation, *arguments, block.shape))
                self._conn.send_bytes(block.data.cast("B"))
        except (BrokenPipeError, ConnectionError, OSError):
            raise self._ended() from None

    def iter_reply(self, stage: str = "", timeout: float | None = None
                   ) -> Generator[tuple[str, int, int], None, Any]:
        """Return the value of the reply to the request sent last, yielding ``(stage, 0,
        0)`` every :data:`POLL_SECONDS` while the child works; ChildFailedError when it refuses,
        ends or takes longer than ``timeout`` seconds (the child is then stopped)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            while not self._conn.poll(POLL_SECONDS):
                if not self._process.is_alive() and not self._conn.poll(0):
                    raise self._ended()
                if deadline is not None and time.monotonic() > deadline:
                    self.close()
                    raise ChildFailedError("timeout")
                if stage:
                    yield (stage, 0, 0)
            try:
                reply = self._conn.recv()
            except (EOFError, OSError):
                raise self._ended() from None
            if reply[0] != "ready":
                break
            self._ready = True
        if reply[0] != "ok":
            raise ChildFailedError(reply[1], reply[2])
        self.warnings += [w for w in reply[2] if w not in self.warnings]
        return reply[1]

    def iter_ask(self, stage: str, operation: str, *arguments: Any,
                 vectors: np.ndarray | None = None, timeout: float | None = None
                 ) -> Generator[tuple[str, int, int], None, Any]:
        """Send a request and return its reply's value, yielding ``(stage, 0, 0)`` while the
        child works (see :meth:`iter_reply`)."""
        self.send(operation, *arguments, vectors=vectors)
        return (yield from self.iter_reply(stage, timeout))

    def ask(self, operation: str, *arguments: Any, vectors: np.ndarray | None = None,
            timeout: float | None = None) -> Any:
        """Send a request and return its reply's value (see :meth:`iter_reply`)."""
        steps = self.iter_ask("", operation, *arguments, vectors=vectors, timeout=timeout)
        while True:
            try:
                next(steps)
            except StopIteration as done:
                return done.value

    def close(self) -> None:
        """End the child (asked to quit, then stopped if it does not)."""
        self._stop()

    def _ended(self) -> ChildFailedError:
        """Return the failure of a child that ended: ``"start"`` when it ended before FAISS
        was imported (a script re-run in it without a ``__main__`` guard), else
        ``"crash"``."""
        self._process.join(1.0)
        return ChildFailedError("crash" if self._ready else "start",
                                crash_reason(self._process.exitcode))


def _stop(process: Any, conn: Any) -> None:
    """End ``process``: ask it to quit, wait a little, then terminate and kill it."""
    with contextlib.suppress(OSError, ValueError):
        conn.send(("quit",))
    process.join(1.0)
    if process.is_alive():
        process.terminate()
        process.join(1.0)
    if process.is_alive():  # pragma: no cover - a child that ignores SIGTERM
        process.kill()
        process.join(1.0)
    conn.close()


def crash_reason(exitcode: int | None) -> str:
    """Return what a child process's exit code says, in words."""
    signals = {-6: "FAISS stopped on one of its own checks (an assertion)",
               -11: "a segmentation fault", -7: "a bus error",
               -9: "it was killed, perhaps by the system for lack of memory"}
    if exitcode in signals:
        return signals[exitcode]
    return "it ended" + ("" if exitcode is None else f" with code {exitcode}")


def available_memory() -> int | None:
    """Return the bytes of memory this machine can give a new process now (Linux's
    ``MemAvailable``; elsewhere its physical memory), or None when unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return None


def memory_limit(at_most: int | None = None) -> int | None:
    """Return the address-space limit of a FAISS child: the memory available now plus
    :data:`HEADROOM`, or ``at_most`` when smaller (None: no limit known)."""
    available = available_memory()
    limit = None if available is None else available + HEADROOM
    if at_most is not None:
        limit = at_most if limit is None else min(limit, at_most)
    return limit


__all__ = ["HEADROOM", "ChildFailedError", "FaissProcess", "available_memory", "crash_reason",
           "memory_limit"]
