"""Oxford5k / Paris6k ground truth (Philbin et al., CVPR 2007 / 2008): a ``gt_files`` folder.

Per query ``<q>`` (``all_souls_1``): ``<q>_query.txt`` holds one line
``oxc1_<image> x1 y1 x2 y2``, the query region in image pixels (Paris6k's files name the
image without the ``oxc1_`` prefix: ``paris_defense_000605 ...``); ``<q>_good.txt``,
``<q>_ok.txt`` and ``<q>_junk.txt`` list image names (no extension), one per line. The
``oxford`` protocol (VGG's ``compute_ap.cpp``, as cirtorch's ``compute_map`` repeats it)
counts good + ok as positive, ignores junk, integrates AP by the trapezoid rule, and keeps
the query image in the ranking: it is one of its own positives (in Oxford5k's good list for
41 queries, in the ok list for 14) and the query is only a region of it.

The ground truth does not list the gallery: it is every image of an image folder
(``--images``; Paris6k's one level of landmark sub-folders is looked into when the folder
itself holds no image), else the names of the descriptor file's rows (its names array, or
``--row-names``), leaving out rows named after a query id (cropped-query descriptors).
"""

from __future__ import annotations

import math
from pathlib import Path

from irviewer.core.dataset import Box, Dataset, Query, build_query, repeated
from irviewer.core.descriptors import name_key
from irviewer.core.errors import InputError, counted, examples, when
from irviewer.core.image_names import IMAGE_SUFFIXES, strip_image_suffix
from irviewer.formats.base import (
    Reader,
    ReadOptions,
    list_images,
    option,
    read_bytes,
    read_text,
)
from irviewer.formats.line_edits import Edit, TextLines, body, edit_lines

NAME = "oxford"
GROUPS = ("good", "ok", "junk")
#: The four files every query has, by the suffix after ``<query id>``.
SUFFIXES = ("_query.txt", "_good.txt", "_ok.txt", "_junk.txt")
QUERY_PREFIX = "oxc1_"
QUERY_LINE = "'oxc1_<image> x1 y1 x2 y2'"


def sniff_oxford(path: Path) -> bool:
    """Return True for a folder holding a ``*_query.txt`` file with a matching ``*_good.txt``;
    never raises."""
    p = Path(path)
    try:
        return p.is_dir() and any(
            q.with_name(q.name[: -len("_query.txt")] + "_good.txt").is_file()
            for q in p.glob("*_query.txt"))
    except OSError:
        return False


def read_oxford(path: Path, options: ReadOptions | None = None) -> Dataset:
    """Return the Oxford5k/Paris6k :class:`Dataset` of a gt_files folder.

    Query name = the query id (``all_souls_1``), query image = the image named in its
    ``_query.txt`` (``oxc1_`` prefix dropped), box = (x1, y1, x2, y2), groups good / ok /
    junk as listed (a repeated line counts once, with a note), ``self_index`` = the query
    image's gallery index, protocol ``oxford``. The gallery comes from ``options.images``
    (sorted file names without extension) or ``options.gallery_names``. InputError, one
    sentence, for a missing or malformed file, or a listed name the gallery lacks.
    """
    opts = options or ReadOptions()
    folder = Path(path)
    where = folder.name
    query_ids = _query_ids(folder)
    gallery, paths = _gallery(opts, where, set(query_ids))
    index = {name: i for i, name in enumerate(gallery)}
    notes: list[str] = []
    unknown: dict[str, str] = {}  # name -> the first file that lists it
    queries: list[Query] = []
    for qid in query_ids:
        query_file = folder / f"{qid}_query.txt"
        image, box = _query_line(query_file)
        if image not in index:
            unknown.setdefault(image, query_file.name)
        groups: dict[str, list[int]] = {}
        for group in GROUPS:
            list_file = folder / f"{qid}_{group}.txt"
            names = _names(list_file, notes)
            for name in names:
                if name not in index:
                    unknown.setdefault(name, list_file.name)
            groups[group] = [index[n] for n in names if n in index]
        queries.append(build_query(qid, image, groups, self_index=index.get(image, -1), box=box,
                                   meta={"landmark": qid.rsplit("_", 1)[0]}))
    if unknown:
        source = "the image folder" if opts.images is not None else "the gallery names"
        raise InputError(f"{where}: {counted(len(unknown), 'image')} named in the ground truth "
                         f"{'is' if len(unknown) == 1 else 'are'} not in {source}, e.g. "
                         f"{examples(f'{n} ({f})' for n, f in sorted(unknown.items()))}")
    return Dataset(name=where, format=NAME, path=folder, gallery=tuple(gallery),
                   queries=tuple(queries), groups=GROUPS, protocols=("oxford",),
                   image_paths=paths, notes=tuple(notes))


def _query_ids(folder: Path) -> list[str]:
    """Return the sorted query ids of a gt_files folder; InputError when a query lacks one of
    its four files or the folder has no query."""
    try:
        files = {p.name for p in folder.iterdir() if p.is_file()}
    except FileNotFoundError:
        raise InputError(f"{folder}: no such folder") from None
    except NotADirectoryError:
        raise InputError(f"{folder}: is a file, not an Oxford/Paris gt_files folder") from None
    except OSError as e:
        raise InputError(f"{folder}: cannot list the folder ({e.strerror})") from None
    ids = sorted({name[: -len(s)] for name in files for s in SUFFIXES
                  if name.endswith(s) and len(name) > len(s)})
    missing = [f"{qid}{s}" for qid in ids for s in SUFFIXES if f"{qid}{s}" not in files]
    if missing:
        raise InputError(f"{folder.name}: {counted(len(missing), 'ground-truth file')} "
                         f"{'is' if len(missing) == 1 else 'are'} missing, e.g. "
                         f"{examples(missing)}; every query needs <q>_query.txt, <q>_good.txt, "
                         "<q>_ok.txt and <q>_junk.txt")
    if not ids:
        raise InputError(f"{folder}: no *_query.txt file; not an Oxford/Paris gt_files folder")
    return ids


def _gallery(opts: ReadOptions, where: str,
             query_ids: set[str]) -> tuple[list[str], dict[str, Path]]:
    """Return the gallery names and image paths from --images (sorted) or the given names.

    Names equal to a query id are cropped-query descriptors, not gallery images: left out.
    """
    if opts.images is not None:
        folder = Path(opts.images)
        files = list_images(folder, IMAGE_SUFFIXES, recursive=not _holds_images(folder),
                            noun="image folder")
        return sorted(p.stem for p in files), {p.stem: p for p in files}
    if opts.gallery_names:
        names = [name_key(n) if strip_image_suffix(n) != n else n for n in opts.gallery_names]
        return [n for n in names if n not in query_ids], {}
    raise InputError(f"{where}: the Oxford/Paris ground truth does not list the gallery; give "
                     f"{option('images')}"
                     f"{when('descriptors', ', a descriptor file with names,')} or "
                     f"{option('row_names')}")


def _holds_images(folder: Path) -> bool:
    """Return True when ``folder`` itself holds an image file (else Paris6k's layout,
    ``paris/<landmark>/*.jpg``, is read one level down); never raises."""
    try:
        return any(p.suffix.lower() in IMAGE_SUFFIXES and p.is_file() for p in folder.iterdir())
    except OSError:
        return True  # list_images reports the folder


def _query_line(path: Path) -> tuple[str, Box]:
    """Return the query image name (``oxc1_`` dropped) and its box from a ``_query.txt``."""
    lines = [(no, line) for no, line in enumerate(read_text(path, "a query file").splitlines(),
                                                  start=1) if line.strip()]
    if len(lines) != 1:
        raise InputError(f"{path.name}: expected one line {QUERY_LINE}, found {len(lines)}")
    no, line = lines[0]
    fields = line.split()
    if len(fields) != 5:
        raise InputError(f"{path.name}, line {no}: expected {QUERY_LINE}, "
                         f"found {len(fields)} fields")
    try:
        x1, y1, x2, y2 = (float(v) for v in fields[1:])
    except ValueError:
        raise InputError(f"{path.name}, line {no}: the box {' '.join(fields[1:])} is not four "
                         "numbers") from None
    if not all(math.isfinite(v) for v in (x1, y1, x2, y2)) or x1 < 0 or y1 < 0 \
            or x2 <= x1 or y2 <= y1:
        raise InputError(f"{path.name}, line {no}: the box {x1:g} {y1:g} {x2:g} {y2:g} is not "
                         "a region (need 0 <= x1 < x2 and 0 <= y1 < y2)")
    image = fields[0].removeprefix(QUERY_PREFIX)
    if not image:
        raise InputError(f"{path.name}, line {no}: no image name before the box")
    return image, (x1, y1, x2, y2)


def _names(path: Path, notes: list[str]) -> list[str]:
    """Return the names in a good/ok/junk list in file order, a repeated line counted once
    (with a note naming the file and the names)."""
    names = []
    for no, line in enumerate(read_text(path, "a ground-truth list").splitlines(), start=1):
        fields = line.split()
        if len(fields) > 1:
            raise InputError(f"{path.name}, line {no}: expected one image name, found "
                             f"{len(fields)} fields ({line.strip()[:60]})")
        names += fields
    unique = list(dict.fromkeys(names))
    if len(unique) != len(names):
        dups = repeated(names)
        notes.append(f"{path.name}: {counted(len(dups), 'name')} listed more than once, "
                     f"counted once ({examples(dups)})")
    return unique


READER = Reader(NAME, "Oxford5k/Paris6k gt_files folder (good/ok/junk, trapezoid AP)",
                sniff_oxford, read_oxford, priority=10,
                takes=frozenset({"images"}))


def gt_file_edits(dataset: Dataset) -> dict[str, Edit]:
    """Return file name -> the corrected bytes of every file of ``dataset``'s gt_files folder
    (its top-level files: the four per query and any other, such as a README): a
    ``_good`` / ``_ok`` / ``_junk`` list loses the lines of names its group no longer holds
    and gains the names it now holds at its end, one per line with the file's own line
    ending; every other line and file is kept byte for byte (order, repeated lines, line
    endings). InputError when the source folder is unknown."""
    if dataset.path is None or not Path(dataset.path).is_dir():
        raise InputError(f"{dataset.label()}: the source gt_files folder is unknown")
    folder = Path(dataset.path)
    edits = {p.name: Edit(read_bytes(p, "a ground-truth file"))
             for p in sorted(folder.iterdir()) if p.is_file() and not p.name.startswith(".")}
    for q in dataset.queries:
        for group in GROUPS:
            name = f"{q.name}_{group}.txt"
            wanted = [dataset.gallery[i] for i in q.group(group).tolist()]
            edits[name] = _edit_list(edits[name].data, wanted)
    return edits


def _edit_list(data: bytes, wanted: list[str]) -> Edit:
    """Return the edit making the list ``data`` hold exactly the names ``wanted`` (listed in
    gallery order), its other lines untouched."""
    keep = set(wanted)
    listed = {_listed_name(body(line)) for line in TextLines.of(data).lines}

    def replace(line: bytes) -> bytes | None:
        name = _listed_name(line)
        return line if not name or name in keep else None

    return edit_lines(data, replace, [n for n in wanted if n not in listed])


def _listed_name(line: bytes) -> str:
    """Return the image name a list line holds ("" for a blank line)."""
    return line.decode("utf-8", "replace").strip()

