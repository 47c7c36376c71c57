"""Thumbnails decoded off the GUI thread (Pillow, reduced-size JPEG decoding) into an LRU
cache. A missing file gives no image (the tile shows the name); a corrupt file or a
decompression bomb gives a "broken" marker, never a crash (the rule is
:func:`irviewer.formats.image_files.read_rgb`). An image made in Python (a function given
to ``irviewer.view``: :class:`~irviewer.core.made_images.MadeImage`) is decoded the same
way, its function called in the decoding thread: nothing from it is no image, an error or
a value that is no picture the "broken" marker."""

from __future__ import annotations

import sys
from collections import OrderedDict
from functools import partial
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QImage

from irviewer.core.errors import InputError
from irviewer.core.made_images import ImageLocation, MadeImage
from irviewer.formats.image_files import made_rgb, read_rgb
from irviewer.gui.workers import Worker, cores

BROKEN = "broken"


def decode(path: ImageLocation | None, size: int) -> QImage | str | None:
    """Return a QImage at most ``size`` px, None for a missing file, BROKEN for a bad one."""
    return decode_with_width(path, size)[0]


def decode_with_width(path: ImageLocation | None, size: int
                      ) -> tuple[QImage | str | None, int]:
    """Return (the image at most ``size`` px or None / BROKEN as :func:`decode`, the width of
    the original image in pixels, 0 when unknown) — the width maps boxes onto the image."""
    if path is None or (not isinstance(path, MadeImage) and not Path(path).is_file()):
        return None, 0
    try:
        found = made_rgb(path, size) if isinstance(path, MadeImage) else read_rgb(path, size)
    except InputError:
        return BROKEN, 0
    if found is None:  # a made image's function gave no picture
        return None, 0
    im, (width, _height) = found
    data = im.tobytes()
    return QImage(data, im.width, im.height, 3 * im.width,
                  QImage.Format.Format_RGB888).copy(), width


def decoder(parent: QObject) -> Worker:
    """Return a worker that decodes images side by side, as many at once as the machine
    has cores; each job's result is (its key, :func:`decode_with_width`'s pair). A job that
    fails (out of memory, or a bug: a bad file is BROKEN, not a failure) is said on the
    terminal, as it cannot be said on a tile (its key is in its result)."""
    worker = Worker(parent, every=True, threads=cores())
    worker.failed.connect(
        lambda message: print(f"irviewer: an image was not decoded: {message}",
                              file=sys.stderr))
    return worker


def decode_job(key: str, path: ImageLocation | None,
               size: int) -> tuple[str, tuple[QImage | str | None, int]]:
    """Return (``key``, the image at most ``size`` px or None / BROKEN, its original
    width): a :func:`decoder`'s job."""
    return key, decode_with_width(path, size)


class ThumbnailCache(QObject):
    """An LRU cache of decoded thumbnails; ``ready(name)`` fires when one arrives."""

    ready = Signal(str)

    def __init__(self, size: int = 160, capacity: int = 600) -> None:
        super().__init__()
        self.size, self.capacity = size, capacity
        self._items: OrderedDict[str, object] = OrderedDict()
        self._pending: set[str] = set()
        self.decoder = decoder(self)
        self.decoder.done.connect(self._arrived)
        self.closed = False

    def close(self) -> None:
        """Stop: wait for the decodes in flight and drop whatever arrives later, so that
        nothing reaches the widgets of a window that is going away."""
        self.closed = True
        self.decoder.wait()
        self._pending.clear()  # what was dropped is decoded again when asked for again

    def get(self, name: str, path: ImageLocation | None) -> object:
        """Return the cached thumbnail (QImage, None or BROKEN), or start loading it and
        return the marker ``...`` meaning "not yet"."""
        self.closed = False  # asked again: its window is in use again
        if name in self._items:
            self._items.move_to_end(name)
            return self._items[name]
        if name not in self._pending:
            self._pending.add(name)
            self.decoder.run(partial(decode_job, name, path, self.size),
                             f"not enough memory to decode {name}")
        return ...

    def load_now(self, items: list[tuple[str, ImageLocation | None]]) -> None:
        """Decode ``items`` on this thread (for --screenshot and tests)."""
        for name, path in items:
            if name not in self._items:
                self._store(name, decode(path, self.size))

    def _arrived(self, decoded: tuple[str, tuple[QImage | str | None, int]]) -> None:
        if not self.closed:
            name, (image, _width) = decoded
            self._store(name, image)

    def _store(self, name: str, image: object) -> None:
        self._pending.discard(name)
        self._items[name] = image
        self._items.move_to_end(name)
        while len(self._items) > self.capacity:
            self._items.popitem(last=False)
        self.ready.emit(name)
