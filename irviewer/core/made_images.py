"""Images that are not files: made when they are shown, by a function a caller gave from
Python (``irviewer.view(..., images=function)``), or held in memory already.

A dataset's ``image_paths`` maps an image name to where its picture is: a file (a
:class:`~pathlib.Path`, what every reader gives) or a :class:`MadeImage`. The one rule that
turns either into pixels is :func:`irviewer.formats.image_files.read_rgb`; the window's
thumbnails and every figure go through it, so a made image is shown wherever a file is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from threading import Lock


@dataclass(frozen=True, eq=False)
class MadeImage:
    """The picture of image ``name``, made by calling ``make(name)``: it returns a PIL image,
    an array (H x W, H x W x 3 or 4, or 3 x H x W), a path to an image file, or None (no
    picture). ``lock`` is held during the call: the function may not be safe to call from
    several threads at once, and the window decodes thumbnails side by side."""

    name: str
    make: Callable[[str], object] = field(repr=False)
    lock: Lock = field(default_factory=Lock, repr=False)

    def __str__(self) -> str:
        return f"{self.name} (made in Python)"


#: Where an image's picture is: its file, or a function that makes it.
ImageLocation = Path | MadeImage


class MadeImages(Mapping[str, MadeImage]):
    """Image name -> :class:`MadeImage` for the images ``names``, all made by ``make`` (one
    call at a time: one lock for all), built when asked for."""

    def __init__(self, names: Iterable[str], make: Callable[[str], object]) -> None:
        self._names = frozenset(names)
        self._make = make
        self._lock = Lock()

    def __getitem__(self, name: str) -> MadeImage:
        if name not in self._names:
            raise KeyError(name)
        return MadeImage(name, self._make, self._lock)

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._names))

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._names


def file_of(location: ImageLocation | None) -> Path | None:
    """Return the file of an image location (None for a made image, or no location): what
    needs the file itself (its bytes, its size on disk, a path written into a file)."""
    return location if isinstance(location, Path) else None


__all__ = ["ImageLocation", "MadeImage", "MadeImages", "file_of"]
