"""Image file names: the extensions irviewer takes for image files, and a name without one.

Every path that takes images uses this one list: the readers that list image folders, the
name matching of descriptor files and result lists (``oxford/all_souls_000013.jpg`` is the
dataset's ``all_souls_000013``), dropped files and the photo search; and this one function
drops an extension, so ``v_bricks.e3.85`` keeps its ``.85`` everywhere alike. (A curator's
photo folder takes whatever Pillow reads, and drops those extensions with the same
function: :mod:`irviewer.formats.photo_folder`.)
"""

from __future__ import annotations

from collections.abc import Collection

#: The extensions of image files, lower case.
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".ppm", ".pgm", ".bmp", ".tif", ".tiff", ".webp")
_IMAGE_SUFFIX_SET = frozenset(IMAGE_SUFFIXES)


def strip_image_suffix(name: str, suffixes: Collection[str] = _IMAGE_SUFFIX_SET) -> str:
    """Return ``name`` without a trailing image extension (one of ``suffixes``, compared in
    lower case; :data:`IMAGE_SUFFIXES` by default), its folders kept: ``a/b.JPG`` -> ``a/b``,
    ``v_bricks.e3.85`` and ``a/.jpg`` stay as they are."""
    dot = name.rfind(".")
    start = max(name.rfind("/"), name.rfind("\\")) + 1
    if dot > start and name[dot:].lower() in suffixes:
        return name[:dot]
    return name
