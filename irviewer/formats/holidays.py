"""INRIA Holidays (Jegou, Douze, Schmid, ECCV 2008): the ground truth is in the file names.

Images are named ``GGGGNN.jpg``: ``GGGG`` is the group (one scene), ``NN == 00`` is the
group's query and the other images of the group are its positives. INRIA's evaluation
package (``holidays_map.py`` with ``holidays_images.dat``) searches every image, the query
included, and skips the query in its own results; AP integrates the PR curve by trapezoids
(``score_ap_from_ranks_1``). Here: the gallery is every image in name order, relevance
group ``positive`` is the whole group (the query itself included, with ``self_index``), and
protocol ``holidays`` removes the self-match and integrates by trapezoids.

INRIA's ``get_groundtruth`` attaches each image to the last ``00`` image *above it in the
file*; this reader groups by the first four digits instead. The two agree on the published
list (sorted, and every group has its ``00`` image); where a group has no ``00`` image, its
images stay in the gallery as negatives for every query and a note says so.

Input: a folder of such images (INRIA ships ``.jpg``; any image extension of
:data:`irviewer.core.image_names.IMAGE_SUFFIXES` is read; not searched recursively), or a name
list such as INRIA's ``holidays_images.dat``: one name per line (``100000.jpg``; a
directory part or a missing extension is accepted; the last line may lack its newline).

A corrected list (``irviewer apply-corrections``) may give an image another group after its
name: ``100301.jpg 1004`` puts image 100301 in group 1004 (images are never renamed). The
``GGGG00`` images stay the queries; each query's positives are the images of its group
(:func:`irviewer.core.label_rules.same_label_groups`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np

from irviewer.core.dataset import Dataset, Query, build_query
from irviewer.core.errors import InputError, counted, examples
from irviewer.core.image_names import strip_image_suffix
from irviewer.core.label_rules import HOLIDAYS, RULE_GROUPS, LabelIndex, same_label_groups
from irviewer.formats.base import (
    Reader,
    ReadOptions,
    by_stem,
    list_images,
    option,
    read_bytes,
    read_text,
)
from irviewer.formats.line_edits import Edit, edit_lines

NAME = "holidays"
#: GGGGNN: a 4-digit group and a 2-digit number within the group.
HOLIDAYS_NAME = re.compile(r"^(\d{4})(\d{2})$")
#: A group given after the name on a corrected list's line.
GROUP_FIELD = re.compile(r"^\d{4}$")
QUERY_NUMBER = "00"
LIST_SUFFIXES = (".dat", ".txt")
SNIFF_BYTES = 65_536
SNIFF_FILES = 500


def holidays_group(name: str) -> str | None:
    """Return the group (first four digits) of a Holidays image name ``GGGGNN``, else None."""
    found = HOLIDAYS_NAME.match(name)
    return found.group(1) if found else None


def list_entry_name(line: str) -> str:
    """Return the image name of one name-list line: no directory, no image extension."""
    return split_list_line(line)[0]


def split_list_line(line: str) -> tuple[str, str | None]:
    """Return (image name, group given after it or None) of one name-list line.

    ``100301.jpg`` -> ("100301", None); ``100301.jpg 1004`` -> ("100301", "1004"). A second
    field that is not four digits leaves the whole line as the name (reported as not a
    Holidays name).
    """
    fields = line.split()
    group = None
    if len(fields) == 2 and GROUP_FIELD.match(fields[1]):
        line, group = fields[0], fields[1]
    base = line.strip().replace("\\", "/").rsplit("/", 1)[-1]
    return strip_image_suffix(base), group


def sniff_holidays(path: Path) -> bool:
    """Return True for a ``.dat``/``.txt`` name list or a folder of images whose names all
    look like ``GGGGNN`` (at most the first 64 KiB of a list, 500 images of a folder)."""
    try:
        p = Path(path)
        if p.is_dir():
            names = _sniff_folder_names(p)
        elif p.is_file() and p.suffix.lower() in LIST_SUFFIXES:
            names = _sniff_list_names(p)
        else:
            return False
    except (OSError, UnicodeDecodeError):
        return False
    return bool(names) and all(HOLIDAYS_NAME.match(n) for n in names)


def read_group_list(path: Path) -> tuple[list[tuple[int, str, str | None]], list[str]]:
    """Return the (line number, image name, group given on the line or None) of each name in
    a list, and notes.

    A repeated name is kept once, with a note. InputError (naming the file) for a file that
    cannot be read, is not UTF-8, or lists no name.
    """
    text = read_text(path, "a name list")
    entries: list[tuple[int, str, str | None]] = []
    first_line: dict[str, int] = {}
    repeated: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        name, group = split_list_line(line)
        if name in first_line:
            repeated.append(f"{name} (lines {first_line[name]} and {number})")
            continue
        first_line[name] = number
        entries.append((number, name, group))
    if not entries:
        raise InputError(f"{path.name} lists no image; a Holidays list has one image name per "
                         "line, e.g. 100000.jpg")
    notes = []
    if repeated:
        what = counted(len(repeated), "name is", "names are")
        notes.append(f"{path.name}: {what} listed twice, e.g. "
                     f"{examples(repeated, 2)}; each is kept once")
    return entries, notes


def read_holidays(path: Path, options: ReadOptions | None = None) -> Dataset:
    """Return the INRIA Holidays :class:`Dataset` of a folder or a name list.

    Gallery: every image, in name order, ``gallery_labels`` its group. Queries: the ``00``
    image of each group, in name order, with ``positive`` = the whole group (itself
    included), ``self_index`` its gallery index and ``meta["label"]`` the group. Protocol
    ``holidays``. With a name list, ``options.images`` is the folder of the ``.jpg`` files.
    Notes: groups with no ``00`` image, queries alone in their group, repeated names,
    missing image files. InputError for a name that is not ``GGGGNN`` (count, examples and
    the first line), two files with one name, or no ``00`` image at all.
    """
    opts = options or ReadOptions()
    path = Path(path)
    where = path.absolute().name
    notes: list[str] = []
    given: dict[str, str] = {}
    if path.is_dir():
        if opts.images is not None:  # refused, not ignored: the folder holds the images
            raise InputError(f"{where}: {option('images')} is for a Holidays name list; a "
                             "Holidays folder is its own image folder, so leave it out")
        names, paths = _folder_names(path)
        lines: dict[str, int] = {}
    else:
        entries, notes = read_group_list(path)
        names = [name for _, name, _ in entries]
        lines = {name: number for number, name, _ in entries}
        given = {name: group for _, name, group in entries if group is not None}
        paths = {}
        if opts.images is not None:
            paths = {n: Path(opts.images) / f"{n}.jpg" for n in names}
            missing = [n for n, p in paths.items() if not p.is_file()]
            if missing:
                verb = "is" if len(missing) == 1 else "are"
                notes.append(f"{len(missing)} of {len(paths)} images {verb} not in "
                             f"{opts.images}, e.g. {examples(missing)}; tiles will show names "
                             "only")
    bad = [n for n in names if holidays_group(n) is None]
    if bad:
        first = f"; the first is on line {lines[bad[0]]}" if lines else ""
        what = counted(len(bad), "name is not a Holidays name", "names are not Holidays names")
        raise InputError(f"{where}: {what} GGGGNN (4-digit group, 2-digit number), e.g. "
                         f"{examples(bad)}{first}")
    gallery = sorted(names)
    labels = np.asarray([given.get(n, n[:4]) for n in gallery])
    queries, no_query, alone = _queries(gallery, labels)
    if not queries:
        raise InputError(f"{where}: no query image (a name ending in {QUERY_NUMBER}) among "
                         f"{counted(len(gallery), 'image', 'images')}, e.g. {examples(gallery)}")
    if no_query:
        one = len(no_query) == 1
        notes.append(f"{counted(len(no_query), 'group has', 'groups have')} no query image "
                     f"(NN = {QUERY_NUMBER}), e.g. {examples(no_query)}; "
                     f"{'its' if one else 'their'} images stay in the database as negatives")
    if alone:
        one = len(alone) == 1
        notes.append(f"{counted(len(alone), 'query is', 'queries are')} alone in "
                     f"{'its' if one else 'their'} group, e.g. {examples(alone)}; the "
                     f"evaluation reports {'it' if one else 'them'} as skipped")
    return Dataset(name="holidays", format=NAME, path=path, gallery=tuple(gallery),
                   queries=tuple(queries), groups=RULE_GROUPS[HOLIDAYS],
                   protocols=("holidays",), image_paths=paths, gallery_labels=labels,
                   notes=tuple(notes))


def _queries(gallery: list[str],
             labels: np.ndarray) -> tuple[list[Query], list[str], list[str]]:
    """Return the queries (the ``GGGG00`` images, in gallery order) of a sorted gallery whose
    images have group ``labels``, the groups with no query, and the queries alone in theirs."""
    index = LabelIndex.of(labels)
    queries: list[Query] = []
    alone: list[str] = []
    for i, name in enumerate(gallery):
        if not name.endswith(QUERY_NUMBER):
            continue
        label = str(labels[i])
        groups = same_label_groups(index, label)
        if len(groups["positive"]) == 1:
            alone.append(name)
        queries.append(build_query(name, name, groups, self_index=i, meta={"label": label}))
    with_query = {str(q.meta["label"]) for q in queries}
    no_query = [g for g in dict.fromkeys(labels.tolist()) if g not in with_query]
    return queries, no_query, alone


def _folder_names(folder: Path) -> tuple[list[str], dict[str, Path]]:
    """Return the image names of a folder and their files; InputError for a repeated name."""
    files = list_images(folder, noun="image folder")
    paths = by_stem(files, folder.absolute().name)
    return list(paths), paths


def _sniff_list_names(path: Path) -> list[str]:
    with path.open("rb") as f:
        head = f.read(SNIFF_BYTES + 1)
    lines = head[:SNIFF_BYTES].decode("utf-8-sig").splitlines()
    if len(head) > SNIFF_BYTES and lines:
        lines = lines[:-1]  # the last line may be cut
    return [list_entry_name(line) for line in lines if line.strip()]


def _sniff_folder_names(folder: Path) -> list[str]:
    names: list[str] = []
    with os.scandir(folder) as it:
        for entry in it:
            stem = strip_image_suffix(entry.name)
            if stem != entry.name and entry.is_file():
                names.append(stem)
                if len(names) >= SNIFF_FILES:
                    break
    return names


READER = Reader(NAME, "INRIA Holidays images named GGGGNN.jpg (a folder, or a name list such "
                "as holidays_images.dat)", sniff_holidays, read_holidays, priority=8,
                takes=frozenset({"images"}))


def group_list_edit(dataset: Dataset) -> Edit:
    """Return ``dataset``'s images as a Holidays name list with corrected groups: for a
    dataset read from a name list, that list with only the lines of images whose group
    changed edited (``100301.jpg`` -> ``100301.jpg 1004``, or the group field dropped when
    an image is back in the group its name says), every other byte kept; for a folder, a new
    list, one ``GGGGNN.jpg`` per line in gallery order, followed by `` GGGG`` where an
    image's group is not the first four digits of its name (images are never renamed)."""
    labels = dict(zip(dataset.gallery, (str(v) for v in np.asarray(dataset.gallery_labels)
                                        .tolist()), strict=True))
    if dataset.path is None or Path(dataset.path).is_dir():
        lines = [f"{name}.jpg" + ("" if label == name[:4] else f" {label}")
                 for name, label in labels.items()]
        return Edit("".join(f"{line}\n" for line in lines).encode("utf-8"), added=len(lines))

    def replace(line: bytes) -> bytes | None:
        text = line.decode("utf-8", "replace")
        if not text.strip():
            return line
        name, group = split_list_line(text)
        label = labels.get(name)
        if label is None or label == (group or name[:4]):
            return line
        indent = text[:len(text) - len(text.lstrip())]
        entry = text.split()[0]
        return (indent + entry + ("" if label == name[:4] else f" {label}")).encode("utf-8")

    return edit_lines(read_bytes(Path(dataset.path), "a Holidays name list"), replace, [])
