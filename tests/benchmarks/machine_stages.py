"""Where the whole ``irviewer eval`` process's time goes, stage by stage, for bench_machine.py.

The process is run as ``python machine_stages.py --driver ...``: a driver that imports
irviewer, wraps the functions named in :data:`STAGES` with wall clocks, and runs
``irviewer.cli.main`` on the arguments given, exactly as ``python -m irviewer`` would (then
exits the same way). No profiler runs: a wrapper costs a few microseconds per call, so the
stages are the process's own times. Each stage's time is *exclusive*: a named function
called inside another (the digest's wait inside reading the descriptors) counts for its own
stage only; a generator (the ranking) counts the time spent in it between its yields. Only
the main thread is timed; the hash, computed on another thread, is reported beside as the
interval it ran (``hash_thread_s``), overlapping the others.

Stages outside the named functions: ``start-up`` (from the parent's spawn to the driver's
first line: the interpreter and its site), ``imports`` (irviewer and the modules ``eval``
uses, imported before ``main`` so they can be wrapped; modules imported on first use inside
a stage stay in it), ``the rest of main`` (arguments, the thread cap, the request, notes:
main's time less the named stages) and ``exit`` (from main's return to the process's end,
as the parent sees it: the interpreter's teardown).
"""

from __future__ import annotations

import importlib
import inspect
import json
import sys
import threading
import time
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

#: (stage, the functions timed for it as "module:attribute" where the caller looks it up);
#: a name that is not found is skipped, and a stage none of whose names is found is
#: reported as not found, so a refactoring shows here instead of measuring nothing.
STAGES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("reading the dataset", ("irviewer.opening.opener:open_ground_truth",)),
    ("reading the descriptors", ("irviewer.methods.making:read_descriptors",)),
    ("waiting for the file hashes", ("irviewer.formats.descriptor_files:file_sha256",
                                     "irviewer.methods.method:digest_hex")),
    ("matching rows by name", ("irviewer.methods.making:align",)),
    ("ranking", ("irviewer.methods.making:_iter_rank",)),
    ("scoring", ("irviewer.opening.opener:evaluate",)),
    ("building the report", ("irviewer.cli.eval:eval_document",
                             "irviewer.cli.eval:format_table",
                             "irviewer.cli.eval:report_json")),
    ("writing the report", ("irviewer.cli.eval:atomic_write_text",)),
)
#: The function that hashes a file's bytes, on whatever thread.
HASHING = ("irviewer.core.descriptors:_hash_into", "irviewer.core.file_digests:_hash_into")


class Clock:
    """Exclusive wall time per stage on the main thread (see the module's docstring)."""

    def __init__(self) -> None:
        self.totals: dict[str, float] = {}
        self.stack: list[list[Any]] = []  # [stage, start, time in nested stages]
        self.main = threading.get_ident()
        self.hashing: list[tuple[float, float]] = []

    def enter(self, stage: str) -> None:
        self.stack.append([stage, time.monotonic(), 0.0])

    def leave(self) -> None:
        stage, start, nested = self.stack.pop()
        elapsed = time.monotonic() - start
        self.totals[stage] = self.totals.get(stage, 0.0) + elapsed - nested
        if self.stack:
            self.stack[-1][2] += elapsed

    def timed(self, stage: str, f: Callable[..., Any]) -> Callable[..., Any]:
        """Return ``f`` wrapped so that its main-thread calls count for ``stage``."""
        if inspect.isgeneratorfunction(f):
            def generator(*args: Any, **kwargs: Any) -> Any:
                if threading.get_ident() != self.main:
                    return f(*args, **kwargs)
                return self._resumed(stage, f(*args, **kwargs))
            return generator

        def call(*args: Any, **kwargs: Any) -> Any:
            if threading.get_ident() != self.main:
                return f(*args, **kwargs)
            self.enter(stage)
            try:
                return f(*args, **kwargs)
            finally:
                self.leave()
        return call

    def _resumed(self, stage: str, gen: Generator[Any, Any, Any]) -> Generator[Any, Any, Any]:
        sent = None
        while True:
            self.enter(stage)
            try:
                item = gen.send(sent)
            except StopIteration as done:
                return done.value
            finally:
                self.leave()
            sent = yield item

    def on_any_thread(self, f: Callable[..., Any]) -> Callable[..., Any]:
        """Return ``f`` wrapped so that every call's (start, end) is kept in :attr:`hashing`."""
        def call(*args: Any, **kwargs: Any) -> Any:
            start = time.monotonic()
            try:
                return f(*args, **kwargs)
            finally:
                self.hashing.append((start, time.monotonic()))
        return call


def wrap(clock: Clock) -> dict[str, list[str]]:
    """Wrap every function of :data:`STAGES` and :data:`HASHING` that exists; return each
    stage's names that were found."""
    found: dict[str, list[str]] = {}
    for stage, names in STAGES:
        found[stage] = []
        for name in names:
            module, f = _lookup(name)
            if f is not None:
                setattr(module, name.split(":")[1], clock.timed(stage, f))
                found[stage].append(name)
    found["hashing"] = []
    for name in HASHING:
        module, f = _lookup(name)
        if f is not None:
            setattr(module, name.split(":")[1], clock.on_any_thread(f))
            found["hashing"].append(name)
    return found


def _lookup(name: str) -> tuple[Any, Any]:
    module_name, attribute = name.split(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return None, None
    return module, getattr(module, attribute, None)


def drive(spawned: float, record: Path, args: list[str]) -> int:
    """Run ``irviewer`` ``args`` in this process with the stages timed; write the record
    (JSON) to ``record``; return the exit code. ``spawned`` is the parent's monotonic clock
    when it started this process."""
    first_line = time.monotonic()
    sys.path.insert(0, str(ROOT))
    importlib.import_module("irviewer")  # first, as python -m irviewer: the BLAS set up
    from irviewer.cli import main

    clock = Clock()
    found = wrap(clock)
    imported = time.monotonic()
    code = main(args)
    ended = time.monotonic()
    named = sum(clock.totals.values())
    hashing = [(a - spawned, b - spawned) for a, b in clock.hashing]
    record.write_text(json.dumps({
        "start-up": first_line - spawned, "imports": imported - first_line,
        "stages": clock.totals, "the rest of main": (ended - imported) - named,
        "main_ended": ended - spawned, "found": found, "hash_intervals": hashing,
        "code": code}))
    return code


def stage_record(command: list[str], env: dict[str, str], record: Path) -> dict[str, Any]:
    """Run ``irviewer`` ``command`` as a driven process (:func:`drive`); return its record
    with ``total`` (the process's wall seconds, as the parent sees them) and ``exit`` (its
    end after main returned)."""
    import subprocess

    spawned = time.monotonic()
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--driver",
                           repr(spawned), str(record), "--", *command], cwd=ROOT, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    total = time.monotonic() - spawned
    if done.returncode:
        raise SystemExit(f"irviewer {' '.join(command)} failed ({done.returncode}): "
                         f"{done.stderr.decode()}")
    out = json.loads(record.read_text())
    out["total"], out["exit"] = total, total - out["main_ended"]
    return out


def budget_rows(out: dict[str, Any]) -> list[tuple[str, float | None]]:
    """Return (stage, seconds) in the process's order, None for a stage not found; the
    last row is the process's total."""
    rows: list[tuple[str, float | None]] = [("start-up (interpreter)", out["start-up"]),
                                            ("imports", out["imports"])]
    for stage, _ in STAGES:
        rows.append((stage, out["stages"].get(stage, 0.0) if out["found"][stage] else None))
    rows += [("the rest of main", out["the rest of main"]), ("exit", out["exit"]),
             ("total", out["total"])]
    return rows


def hash_thread_s(out: dict[str, Any]) -> float:
    """Return the seconds the files' hashing ran (the sum of its calls' durations, on
    whichever thread)."""
    return sum(b - a for a, b in out["hash_intervals"])


if __name__ == "__main__" and sys.argv[1:2] == ["--driver"]:
    sep = sys.argv.index("--")
    raise SystemExit(drive(float(sys.argv[2]), Path(sys.argv[3]), sys.argv[sep + 1:]))
