"""The autosave of corrections a window could not save yet (another writer held the file's
lock, the folder could not be written): until they are in the corrections file, the window
keeps them here, so that a crash or a closed window loses none.

One JSON file per window in the user's data folder (``corrections/unsaved/<window>.json``),
written atomically each time the window's unsaved corrections change and removed once they
are saved (or discarded by the user). It holds the corrections file it belongs to, what the
window last read from it (``base``) and every row the window holds (``ours``): the two sides
of the three-way merge (:func:`irviewer.formats.corrections_merge.merge`), so that saving
them later, from another window, keeps what other writers did meanwhile. A file whose
window is gone (its process no longer runs on this host; from another host, an hour old) is
*orphaned*: the next window that opens the same corrections file saves it.
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass, fields
from pathlib import Path

from irviewer.core.corrections import Correction
from irviewer.io import user_data
from irviewer.io.atomic import atomic_write_text

#: The folder of the user's data folder that holds the unsaved corrections.
FOLDER = ("corrections", "unsaved")
#: Seconds after which an autosave written on another host counts as its window's last.
OTHER_HOST_AFTER = 3600.0
_FIELDS = tuple(f.name for f in fields(Correction))
#: The windows of this process that keep their own autosave (:func:`hold`).
_LIVE: set[str] = set()


def hold(window: str) -> None:
    """The window ``window`` of this process runs: its autosave is its own."""
    _LIVE.add(window)


def release(window: str) -> None:
    """The window ``window`` closed: an autosave it left is an orphan from now on."""
    _LIVE.discard(window)


def detach(window: str) -> Path | None:
    """Leave the window's autosave to the next window that opens its corrections file (the
    window moves on to other data with corrections it could not save): it is kept under an
    id of its own, an orphan from now on; return its new file (None: there was none)."""
    unsaved = read_unsaved(autosave_file(window))
    if unsaved is None:
        return None
    left = f"{window}-{uuid.uuid4().hex[:6]}"
    target = write_unsaved(left, unsaved.path, unsaved.base, unsaved.ours)
    clear_unsaved(window)
    return target


@dataclass(frozen=True)
class Unsaved:
    """A window's unsaved corrections: the corrections file, what the window last read from
    it, every row it held, which window (``window``, ``pid`` on ``host``) and when (Unix
    time); ``source`` is the autosave file."""

    path: Path
    base: tuple[Correction, ...]
    ours: tuple[Correction, ...]
    window: str
    pid: int
    host: str
    time: float
    source: Path

    def count(self) -> int:
        """Return how many corrections differ from what the window last read."""
        return pending(self.base, self.ours)


def pending(base: Sequence[Correction], ours: Sequence[Correction]) -> int:
    """Return how many pairs or images ``ours`` sets differently from ``base`` (added,
    changed or deleted)."""
    b, o = {c.key: c for c in base}, {c.key: c for c in ours}
    return sum(b.get(k) != o.get(k) for k in {*b, *o})


def folder() -> Path:
    """Return the folder of the autosaves (not created here)."""
    return user_data.user_data_folder().joinpath(*FOLDER)


def autosave_file(window: str) -> Path:
    """Return the autosave of the window ``window``."""
    return folder() / f"{window}.json"


def write_unsaved(window: str, path: Path, base: Sequence[Correction],
                  ours: Sequence[Correction]) -> Path:
    """Keep the window's unsaved corrections (``ours``, read from ``path`` as ``base``) in
    its autosave, atomically; return the autosave file. OSError when it cannot be
    written."""
    target = autosave_file(window)
    target.parent.mkdir(parents=True, exist_ok=True)
    record = {"corrections_file": str(Path(os.path.abspath(path))), "window": window,
              "pid": os.getpid(), "host": socket.gethostname(), "time": time.time(),
              "base": [_row(c) for c in base], "ours": [_row(c) for c in ours]}
    atomic_write_text(target, json.dumps(record, ensure_ascii=False, indent=1) + "\n")
    return target


def clear_unsaved(window: str) -> None:
    """Remove the window's autosave (its corrections are saved, or discarded)."""
    with suppress(OSError):
        autosave_file(window).unlink()


def orphaned(path: Path) -> list[Unsaved]:
    """Return the autosaves of windows that are gone and held corrections of the file
    ``path``, oldest first (unreadable autosaves are left alone)."""
    where = folder()
    if not where.is_dir():
        return []
    target = Path(os.path.abspath(path))
    found = []
    for source in sorted(where.glob("*.json")):
        unsaved = read_unsaved(source)
        if unsaved is not None and unsaved.path == target and _gone(unsaved):
            found.append(unsaved)
    return sorted(found, key=lambda u: u.time)


def read_unsaved(source: Path) -> Unsaved | None:
    """Return the autosave at ``source`` (None: unreadable or not one)."""
    try:
        record = json.loads(Path(source).read_text(encoding="utf-8"))
        return Unsaved(Path(record["corrections_file"]),
                       tuple(_correction(r) for r in record["base"]),
                       tuple(_correction(r) for r in record["ours"]),
                       str(record["window"]), int(record["pid"]), str(record["host"]),
                       float(record["time"]), Path(source))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _gone(unsaved: Unsaved) -> bool:
    """Return True when the window that wrote ``unsaved`` no longer runs."""
    if unsaved.host != socket.gethostname():
        return time.time() - unsaved.time > OTHER_HOST_AFTER
    if unsaved.pid == os.getpid():
        return unsaved.window not in _LIVE  # a window of this process saves its own
    try:
        os.kill(unsaved.pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def _row(c: Correction) -> list[str]:
    return [getattr(c, name) for name in _FIELDS]


def _correction(row: object) -> Correction:
    if not isinstance(row, list) or not all(isinstance(v, str) for v in row):
        raise ValueError("not a row")
    return Correction(*row[:len(_FIELDS)])
