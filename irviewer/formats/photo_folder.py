"""A curator's folder of photos: which files are the photos, and of which artwork.

Two layouts, and any mix of them (:func:`list_photo_folder`):

* a **flat folder**: each image file is one artwork, whose id is the file name without its
  extension (``mona-lisa.jpg`` is the artwork ``mona-lisa``);
* a **folder of subfolders**: each subfolder is one artwork, whose id is the subfolder's
  name, and every image inside it (at any depth) is a view of that artwork.

An image is a file whose extension Pillow reads (:data:`PHOTO_SUFFIXES`, asked of Pillow
itself, so a Pillow with more plug-ins reads more); hidden files and folders (a leading
``.``) and every other file are passed over. Whether an image file actually decodes is
found out when it is described, not here.

Each photo gets a *name*, unique in the collection, by which its descriptor row is matched
(:func:`irviewer.core.descriptors.name_key` drops folders, so a name never holds one): the
artwork id for a photo at the top, ``artwork:photo`` for a view in a subfolder (a view in a
deeper folder joins the folders with ``:`` too).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from irviewer.core.descriptors import name_key
from irviewer.core.errors import InputError, counted, examples
from irviewer.core.image_names import strip_image_suffix

#: Pillow formats that are not photographs or need a program Pillow does not ship: files
#: with their extensions are passed over like any other file.
_NOT_PHOTOS = frozenset({"BUFR", "GRIB", "HDF5", "MPEG", "EPS", "WMF", "FITS"})
#: Extensions of photos that this Pillow cannot read, named in a line when found.
UNREADABLE_PHOTOS = (".heic", ".heif", ".raw", ".cr2", ".nef", ".arw", ".dng")
#: Folder names a photo folder never holds artworks in (operating-system clutter).
_CLUTTER = frozenset({"__MACOSX", "@eaDir", "$RECYCLE.BIN", "System Volume Information"})
#: Joins an artwork id and a view's name inside its subfolder.
VIEW_SEPARATOR = ":"
#: The layouts a photo folder can have.
FLAT, FOLDERS, MIXED = "flat", "folders", "mixed"


def photo_suffixes() -> frozenset[str]:
    """Return the lower-case extensions of the image files Pillow can read (its registered
    extensions whose format it can open, without :data:`_NOT_PHOTOS`; ``.mpo`` photos are
    JPEG files)."""
    Image.init()
    found = {ext.lower() for ext, fmt in Image.registered_extensions().items()
             if fmt in Image.OPEN and fmt not in _NOT_PHOTOS}
    return frozenset(found | {".mpo"})


@dataclass(frozen=True)
class Photo:
    """One photo of a photo folder: its ``artwork`` id, its path ``relative`` to the folder
    (with ``/``), its unique ``name``, its size in bytes and modification time (ns): the
    key by which a re-run knows that it has not changed."""

    artwork: str
    relative: str
    name: str
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class PhotoFolder:
    """What a photo folder holds: its photos (sorted by path), its layout (:data:`FLAT`,
    :data:`FOLDERS` or :data:`MIXED`), and one sentence per thing worth telling (names
    shared by two photos, unreadable photo types, subfolders without a photo)."""

    folder: Path
    photos: tuple[Photo, ...]
    layout: str
    notes: tuple[str, ...]

    @property
    def artworks(self) -> tuple[str, ...]:
        """Return the artwork ids, each once, in photo order."""
        return tuple(dict.fromkeys(p.artwork for p in self.photos))


def _hidden(name: str) -> bool:
    return name.startswith(".") or name in _CLUTTER


def list_photo_folder(folder: Path, skip: Path | None = None) -> PhotoFolder:
    """Return the photos of ``folder`` by its layout (see the module docstring).

    ``skip`` is a folder never looked into (the collection, when it is written inside the
    photo folder). InputError with one sentence when ``folder`` does not exist, is a file,
    cannot be listed, or holds no photo at all.
    """
    folder = Path(folder)
    if not folder.exists():
        raise InputError(f"{folder}: no such folder; give the folder that holds the photos")
    if not folder.is_dir():
        raise InputError(f"{folder}: is a file, not a folder; give the folder that holds the "
                         "photos (one photo per artwork, or one subfolder per artwork)")
    suffixes = photo_suffixes()
    skip_real = os.path.realpath(skip) if skip is not None else None
    found: list[tuple[str, str, os.stat_result]] = []  # (artwork, relative, stat)
    unreadable: list[str] = []
    empty_folders: list[str] = []
    top_files = sub_folders = 0

    def walk(directory: str, parts: tuple[str, ...]) -> int:
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except PermissionError:
            if not parts:
                raise
            return 0  # a subfolder that cannot be listed is passed over
        photos = 0
        for entry in entries:
            if _hidden(entry.name):
                continue
            if entry.is_dir(follow_symlinks=False):
                if skip_real is not None and os.path.realpath(entry.path) == skip_real:
                    continue
                inside = walk(entry.path, (*parts, entry.name))
                photos += inside
                if not parts:
                    _count_folder(entry.name, inside)
                continue
            if not entry.is_file():
                continue
            suffix = os.path.splitext(entry.name)[1].lower()
            if suffix not in suffixes:
                if suffix in UNREADABLE_PHOTOS:
                    unreadable.append("/".join((*parts, entry.name)))
                continue
            artwork = parts[0] if parts else os.path.splitext(entry.name)[0]
            found.append((artwork, "/".join((*parts, entry.name)), entry.stat()))
            photos += 1
            if not parts:
                _count_top()
        return photos

    def _count_folder(name: str, photos: int) -> None:
        nonlocal sub_folders
        if photos:
            sub_folders += 1
        else:
            empty_folders.append(name)

    def _count_top() -> None:
        nonlocal top_files
        top_files += 1

    try:
        walk(str(folder), ())
    except OSError as e:
        raise InputError(f"{folder}: cannot list the folder ({e.strerror})") from None
    notes = []
    if unreadable:
        notes.append(f"{counted(len(unreadable), 'photo')} of a type Pillow cannot read "
                     f"{'was' if len(unreadable) == 1 else 'were'} passed over, e.g. "
                     f"{examples(unreadable)}; save {'it' if len(unreadable) == 1 else 'them'}"
                     " as JPEG to index them")
    if empty_folders:
        notes.append(f"{counted(len(empty_folders), 'subfolder')} "
                     f"{'holds' if len(empty_folders) == 1 else 'hold'} no photo and "
                     f"{'is' if len(empty_folders) == 1 else 'are'} not an artwork: "
                     f"{examples(empty_folders)}")
    if not found:
        raise InputError(f"{folder}: holds no photo irviewer reads (.jpg, .png, .tif, "
                         ".webp, ...); put the photos in it, one per artwork, or one "
                         "subfolder per artwork")
    found.sort(key=lambda f: f[1].split("/"))
    photos, shared = _named(found, suffixes)
    if shared:
        notes.append(f"{counted(len(shared), 'name')} {'is' if len(shared) == 1 else 'are'} "
                     f"shared by photos of different types, e.g. {examples(shared)}: they "
                     "are taken as views of the same artwork")
    layout = FOLDERS if not top_files else (FLAT if not sub_folders else MIXED)
    return PhotoFolder(folder, tuple(photos), layout, tuple(notes))


def _named(found: list[tuple[str, str, os.stat_result]],
           suffixes: frozenset[str]) -> tuple[list[Photo], list[str]]:
    """Return the photos (their extensions among ``suffixes``) with unique names (see the
    module docstring; a name whose key is taken gets ``~2``, ``~3``...) and the names that
    two photos shared."""
    photos: list[Photo] = []
    keys: set[str] = set()
    shared: list[str] = []
    for artwork, relative, stat in found:
        parts = relative.split("/")
        stem = strip_image_suffix(parts[-1], suffixes)
        inner = [*parts[1:-1], stem] if len(parts) > 1 else []
        name = VIEW_SEPARATOR.join([artwork, *inner]) if inner else stem
        name = name.replace("\\", "_")
        base, n = name, 1
        while name_key(name) in keys:
            n += 1
            name = f"{base}~{n}"
        if n > 1 and len(parts) == 1:
            shared.append(base)
        keys.add(name_key(name))
        photos.append(Photo(artwork, relative, name, int(stat.st_size), int(stat.st_mtime_ns)))
    return photos, shared
