"""A kiosk's watched folder (Qt-free): the photos that arrive in it, each once, when it has
been written whole.

A kiosk's camera, a phone app or a staff member puts a visitor's photo into a folder; the
kiosk answers it. A photo counts once it is *complete*: seen with the same size and
modification time on two looks in a row (a photo still being copied in grows between
them), and not empty. Photos already there when the watch starts are not visitors'
photos and are never answered; a photo written again under the same name (a camera that
always saves ``latest.jpg``) arrives again.
"""

from __future__ import annotations

import os
from pathlib import Path

from irviewer.formats.photo_folder import photo_suffixes

#: (size in bytes, modification time in ns): how a photo is known to have changed.
Stamp = tuple[int, int]


class PhotoInbox:
    """The photos arriving in ``folder`` (see the module docstring). :meth:`look` returns
    the photos complete since the last look, oldest first."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self._suffixes = photo_suffixes()
        self._answered: dict[str, Stamp] = self._scan()  # there before the watch: not new
        self._pending: dict[str, Stamp] = {}

    def _scan(self) -> dict[str, Stamp]:
        """Return file name -> stamp of the photos in the folder now ({} when the folder is
        missing or unreadable: a kiosk goes on while the folder is away)."""
        found: dict[str, Stamp] = {}
        try:
            entries = list(os.scandir(self.folder))
        except OSError:
            return found
        for entry in entries:
            if entry.name.startswith(".") or \
                    os.path.splitext(entry.name)[1].lower() not in self._suffixes:
                continue
            try:
                if entry.is_file():
                    st = entry.stat()
                    found[entry.name] = (st.st_size, st.st_mtime_ns)
            except OSError:
                continue
        return found

    def look(self) -> list[Path]:
        """Return the photos that are new or rewritten since the last look and complete
        (the same size and time as at the previous look, not empty), oldest first; each is
        returned once."""
        now = self._scan()
        ready = [name for name, stamp in now.items()
                 if self._answered.get(name) != stamp and self._pending.get(name) == stamp
                 and stamp[0] > 0]
        self._pending = {name: stamp for name, stamp in now.items()
                         if self._answered.get(name) != stamp}
        for name in ready:
            self._answered[name] = now[name]
            del self._pending[name]
        ready.sort(key=lambda name: (now[name][1], name))
        return [self.folder / name for name in ready]
