"""Oxford5k / Paris6k ground truth (Philbin et al., CVPR 2007 / 2008): a ``gt_files`` folder.

Per query ``<q>``: ``<q>_query.txt`` holds one line ``oxc1_<image> x1 y1 x2 y2`` (Paris6k
files have no ``oxc1_`` prefix), the query region in image pixels; ``<q>_good.txt``,
``<q>_ok.txt`` and ``<q>_junk.txt`` list image names, one per line. The ``oxford`` protocol
(VGG's ``compute_ap.cpp``) counts good + ok as positive, ignores junk, integrates AP by the
trapezoid rule, and keeps the query image in the ranking: it is in its own good list and the
query is only a region of it.

The ground truth does not list the gallery: it is every image of an image folder
(``--images``), else the names of the descriptor file's rows (its names array, or
``--row-names``), leaving out rows named after a query id (cropped-query descriptors).
"""

from __future__ import annotations

import math
from pathlib import Path

from irviewer.core.dataset import Dataset, build_query
from irviewer.core.errors import InputError, examples
from irviewer.formats.base import Reader, ReadOptions, list_images

NAME = "oxford"
GROUPS = ("good", "ok", "junk")
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png")


def sniff_oxford(path: Path) -> bool:
    """Return True for a folder holding ``*_query.txt`` files with matching ``*_good.txt``."""
    p = Path(path)
    try:
        return p.is_dir() and any((q.parent / q.name.replace("_query.txt", "_good.txt")).is_file()
                                  for q in p.glob("*_query.txt"))
    except OSError:
        return False


def read_oxford(path: Path, options: ReadOptions | None = None) -> Dataset:
    """Return the Oxford5k/Paris6k :class:`Dataset` of a gt_files folder (protocol oxford)."""
    opts = options or ReadOptions()
    folder = Path(path)
    where = folder.name
    try:
        query_files = sorted(folder.glob("*_query.txt"))
    except OSError as e:
        raise InputError(f"{folder}: cannot list the folder ({e.strerror})") from None
    if not query_files:
        raise InputError(f"{folder}: no *_query.txt file; not an Oxford/Paris gt_files folder")
    query_ids = {qf.name[: -len("_query.txt")] for qf in query_files}
    gallery, paths = _gallery(opts, where, query_ids)
    index = {name: i for i, name in enumerate(gallery)}
    notes: list[str] = []
    queries = []
    unknown: list[str] = []
    for qf in query_files:
        qid = qf.name[: -len("_query.txt")]
        image, box = _query_line(qf)
        groups: dict[str, list[int]] = {}
        for group in GROUPS:
            names = _list(folder / f"{qid}_{group}.txt", notes)
            unknown += [n for n in names if n not in index]
            groups[group] = [index[n] for n in names if n in index]
        if image not in index:
            unknown.append(image)
        queries.append(build_query(qid, image, groups, self_index=index.get(image, -1), box=box,
                                   meta={"landmark": qid.rsplit("_", 1)[0]}))
    if unknown:
        missing = sorted(set(unknown))
        source = "the image folder" if opts.images is not None else "the gallery names"
        raise InputError(f"{where}: {len(missing)} images named in the ground truth are not in "
                         f"{source}, e.g. {examples(missing)}")
    return Dataset(name=where, format=NAME, path=folder, gallery=tuple(gallery),
                   queries=tuple(queries), groups=GROUPS, protocols=("oxford",),
                   image_paths=paths, notes=tuple(notes))


def _gallery(opts: ReadOptions, where: str,
             query_ids: set[str]) -> tuple[list[str], dict[str, Path]]:
    """Return the gallery names and image paths from --images (sorted) or the given names.

    Names equal to a query id are cropped-query descriptors, not gallery images: left out.
    """
    if opts.images is not None:
        files = list_images(Path(opts.images), IMAGE_SUFFIXES, noun="image folder")
        return [p.stem for p in files], {p.stem: p for p in files}
    if opts.gallery_names:
        names = [Path(n).stem if Path(n).suffix.lower() in IMAGE_SUFFIXES else n
                 for n in opts.gallery_names]
        return [n for n in names if n not in query_ids], {}
    raise InputError(f"{where}: the Oxford/Paris ground truth does not list the gallery; give "
                     "--images DIR, a descriptor file with names, or --row-names FILE")


def _query_line(path: Path) -> tuple[str, tuple[float, float, float, float]]:
    lines = [line for line in _read(path).splitlines() if line.strip()]
    if len(lines) != 1:
        raise InputError(f"{path.name}: expected one line 'oxc1_<image> x1 y1 x2 y2', "
                         f"found {len(lines)}")
    fields = lines[0].split()
    if len(fields) != 5:
        raise InputError(f"{path.name}, line 1: expected 'oxc1_<image> x1 y1 x2 y2', "
                         f"found {len(fields)} fields")
    try:
        x1, y1, x2, y2 = (float(v) for v in fields[1:])
    except ValueError:
        raise InputError(f"{path.name}, line 1: the box {' '.join(fields[1:])} is not four "
                         "numbers") from None
    if not all(math.isfinite(v) for v in (x1, y1, x2, y2)) or x1 < 0 or y1 < 0 \
            or x2 <= x1 or y2 <= y1:
        raise InputError(f"{path.name}, line 1: the box {x1:g} {y1:g} {x2:g} {y2:g} is not a "
                         "region (need 0 <= x1 < x2 and 0 <= y1 < y2)")
    return fields[0].removeprefix("oxc1_"), (x1, y1, x2, y2)


def _list(path: Path, notes: list[str]) -> list[str]:
    """Return the names in a good/ok/junk list, de-duplicated (with a note) in file order."""
    names = [line.strip() for line in _read(path).splitlines() if line.strip()]
    unique = list(dict.fromkeys(names))
    if len(unique) != len(names):
        seen: set[str] = set()
        dups = [n for n in names if n in seen or seen.add(n)]
        notes.append(f"{path.name}: {len(dups)} repeated line(s) counted once ({examples(dups)})")
    return unique


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path.name} is missing: every query needs _query, _good, _ok and "
                         "_junk files") from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path.name}: cannot read ({e})") from None


READER = Reader(NAME, "Oxford5k/Paris6k gt_files folder (good/ok/junk, trapezoid AP)",
                sniff_oxford, read_oxford, priority=10)
