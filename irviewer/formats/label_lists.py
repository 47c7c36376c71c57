"""What the readers of metric learning's label lists share (Stanford Online Products,
CUB-200-2011, Cars196, In-Shop): splitting a whitespace-separated list into checked rows,
the dataset names of listed image paths, and the image files found for them.

Names: an image is named by its listed path without the image extension
(``bicycle_final/111085122871_0``), as the CSV manifest names its images. Descriptor rows are
matched to images by the name without its folders (``111085122871_0``,
:func:`irviewer.core.descriptors.name_key`), so where two listed files share a file name in
different folders (In-Shop's ``02_1_front.jpg`` in every item's folder) every name is the
path with its folders joined by ``-`` instead (``img-WOMEN-Dresses-id_00000002-02_1_front``),
unique without folders; a note says so.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from irviewer.core.dataset import repeated
from irviewer.core.descriptors import name_keys
from irviewer.core.errors import InputError, counted, examples
from irviewer.core.image_names import strip_image_suffix
from irviewer.formats.base import ImageFiles, option, read_text

#: What joins the folders of a listed path in a name when file names repeat across folders.
FOLDER_JOIN = "-"
#: How many bytes of a file a sniffer reads.
SNIFF_BYTES = 4096


@dataclass(frozen=True)
class Row:
    """One line of a list: its 1-based line number and its whitespace-separated fields."""

    line: int
    fields: tuple[str, ...]


def read_rows(path: Path, what: str, skip: int = 0) -> list[Row]:
    """Return the non-empty lines of text file ``path`` after its first ``skip`` lines, as
    rows of whitespace-separated fields; InputError naming the file when it cannot be read
    or is not UTF-8 (``what`` names the expected kind of file)."""
    text = read_text(path, what)
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if number > skip and line.strip():
            rows.append(Row(number, tuple(line.split())))
    return rows


def head_lines(path: Path, count: int) -> list[str]:
    """Return the first ``count`` lines of a file (at most :data:`SNIFF_BYTES` read), for a
    sniffer; empty when it cannot be read as text. Never raises."""
    try:
        with Path(path).open("rb") as f:
            head = f.read(SNIFF_BYTES)
        return head.decode("utf-8-sig").splitlines()[:count]
    except (OSError, UnicodeDecodeError):
        return []


def whole_number(row: Row, at: int, where: str, what: str) -> int:
    """Return field ``at`` of ``row`` as an int; InputError naming the file, the line and
    ``what`` the field is, when it is not a whole number."""
    try:
        return int(row.fields[at])
    except ValueError:
        raise InputError(f"{where}: line {row.line}: {what} {row.fields[at]!r} is not a whole "
                         "number") from None


def image_names(paths: Sequence[str], where: str) -> tuple[tuple[str, ...], list[str]]:
    """Return the dataset name of each listed image path (see the module) and notes;
    InputError naming ``where`` when a path is listed twice."""
    names = [strip_image_suffix(p.replace("\\", "/")) for p in paths]
    twice = repeated(names)
    if twice:
        raise InputError(f"{where}: {counted(len(twice), 'image is', 'images are')} listed "
                         f"twice, e.g. {examples(twice)}")
    if len(set(name_keys(names))) == len(names):
        return tuple(names), []
    joined = tuple(n.replace("/", FOLDER_JOIN) for n in names)
    return joined, [f"{where}: file names repeat in different folders, so each image is named "
                    f"by its path with the folders joined by '{FOLDER_JOIN}' (e.g. "
                    f"{joined[0]}): name descriptor rows so, or store them in the list's "
                    "order without names"]


def locate_images(names: Sequence[str], paths: Sequence[str], folders: Sequence[Path],
                  given: Path | None, where: str) -> tuple[ImageFiles | dict[str, Path],
                                                          list[str]]:
    """Return the image files of the listed ``paths`` (name -> file) and notes.

    The files are looked for under ``given`` (``--images``) when given, else under the first
    of ``folders`` that holds the first listed file. When none does, or some files are
    missing, a note says so: tiles then show names only. The listed paths are checked all
    (one ``stat`` each)."""
    candidates = [Path(given)] if given is not None else list(folders)
    base = next((f for f in candidates if os.path.isfile(os.path.join(f, paths[0]))), None)
    if base is None:
        looked = ", ".join(str(f) for f in candidates)
        return {}, [f"{where}: the images are not under {looked}; tiles will show names only "
                    f"(give the folder the listed paths start from with {option('images')})"]
    missing = [n for n, p in zip(names, paths, strict=True)
               if not os.path.isfile(os.path.join(base, p))]
    notes = []
    if missing:
        verb = "is" if len(missing) == 1 else "are"
        notes.append(f"{where}: {len(missing):,} of {len(names):,} listed images {verb} not in "
                     f"{base}, e.g. {examples(missing)}; their tiles will show names only")
    return ImageFiles(base, dict(zip(names, paths, strict=True))), notes
