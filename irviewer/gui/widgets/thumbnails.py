"""Thumbnails decoded off the GUI thread (Pillow, reduced-size JPEG decoding) into an LRU
cache. A missing file gives no image (the tile shows the name); a corrupt file or a
decompression bomb gives a "broken" marker, never a crash (the rule is
:func:`irviewer.formats.image_files.read_rgb`)."""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal
from PySide6.QtGui import QImage

from irviewer.core.errors import InputError
from irviewer.formats.image_files import read_rgb

BROKEN = "broken"


def decode(path: Path | None, size: int) -> QImage | str | None:
    """Return a QImage at most ``size`` px, None for a missing file, BROKEN for a bad one."""
    return decode_with_width(path, size)[0]


def decode_with_width(path: Path | None, size: int) -> tuple[QImage | str | None, int]:
    """Return (the image at most ``size`` px or None / BROKEN as :func:`decode`, the width of
    the original image in pixels, 0 when unknown) — the width maps boxes onto the image."""
    if path is None or not Path(path).is_file():
        return None, 0
    try:
        im, (width, _height) = read_rgb(path, reduce_to=size)
    except InputError:
        return BROKEN, 0
    data = im.tobytes()
    return QImage(data, im.width, im.height, 3 * im.width,
                  QImage.Format.Format_RGB888).copy(), width


class DecodeSignals(QObject):
    """``ready(key, status, image, original width)`` from a :class:`DecodeJob`.

    Only Qt value types cross threads (a Python object in a queued signal is not safe):
    the key, "image" / "missing" / "broken", the image (empty unless "image") and the
    original width (0 unless known)."""

    ready = Signal(str, str, QImage, int)


class DecodeJob(QRunnable):
    """Decode one image in the thread pool and report it through ``signals``."""

    def __init__(self, key: str, path: Path | None, size: int,
                 signals: DecodeSignals) -> None:
        super().__init__()
        self.key, self.path, self.size, self.signals = key, path, size, signals

    def run(self) -> None:
        result, width = decode_with_width(self.path, self.size)
        if isinstance(result, QImage):
            self.signals.ready.emit(self.key, "image", result, width)
        else:
            self.signals.ready.emit(self.key, "broken" if result == BROKEN else "missing",
                                    QImage(), 0)


class ThumbnailCache(QObject):
    """An LRU cache of decoded thumbnails; ``ready(name)`` fires when one arrives."""

    ready = Signal(str)

    def __init__(self, size: int = 160, capacity: int = 600) -> None:
        super().__init__()
        self.size, self.capacity = size, capacity
        self._items: OrderedDict[str, object] = OrderedDict()
        self._pending: set[str] = set()
        self._signals = DecodeSignals()
        self._signals.ready.connect(self._arrived)
        self.pool = QThreadPool.globalInstance()
        self.closed = False

    def close(self) -> None:
        """Stop: wait for the decodes in flight and drop whatever arrives later, so that
        nothing reaches the widgets of a window that is going away."""
        self.closed = True
        self.pool.waitForDone()

    def get(self, name: str, path: Path | None) -> object:
        """Return the cached thumbnail (QImage, None or BROKEN), or start loading it and
        return the marker ``...`` meaning "not yet"."""
        self.closed = False  # asked again: its window is in use again
        if name in self._items:
            self._items.move_to_end(name)
            return self._items[name]
        if name not in self._pending:
            self._pending.add(name)
            self.pool.start(DecodeJob(name, path, self.size, self._signals))
        return ...

    def load_now(self, items: list[tuple[str, Path | None]]) -> None:
        """Decode ``items`` on this thread (for --screenshot and tests)."""
        for name, path in items:
            if name not in self._items:
                self._store(name, decode(path, self.size))

    def _arrived(self, name: str, kind: str, image: QImage, _width: int) -> None:
        if self.closed:
            return
        self._store(name, image if kind == "image" else (BROKEN if kind == "broken" else None))

    def _store(self, name: str, image: object) -> None:
        self._pending.discard(name)
        self._items[name] = image
        self._items.move_to_end(name)
        while len(self._items) > self.capacity:
            self._items.popitem(last=False)
        self.ready.emit(name)
