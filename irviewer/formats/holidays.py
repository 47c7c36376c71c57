"""INRIA Holidays (Jegou, Douze, Schmid, ECCV 2008): ground truth in the file names.

Images are named ``GGGGNN.jpg``: the group is the first four digits, ``NN == 00`` is the
group's query, the other images of the group are its positives. As INRIA's
``eval_holidays`` package does, every image is in the database, the query included, and the
query is removed from its own results (protocol ``holidays``: trapezoid AP, mP@1 beside).
Input: a folder of such images, or a name list (``holidays_images.dat``, one name per line).
"""

from __future__ import annotations

import re
from pathlib import Path

from irviewer.core.dataset import Dataset, build_query
from irviewer.core.errors import InputError, examples
from irviewer.formats.base import Reader, ReadOptions, list_images, read_text

NAME = "holidays"
PATTERN = re.compile(r"^(\d{4})(\d{2})$")


def _names_from(path: Path) -> tuple[list[str], dict[str, Path]]:
    if path.is_dir():
        files = list_images(path, (".jpg", ".jpeg"))
        return [p.stem for p in files], {p.stem: p for p in files}
    lines = read_text(path, "a name list").splitlines()
    return [Path(line.strip()).stem for line in lines if line.strip()], {}


def sniff_holidays(path: Path) -> bool:
    """Return True for a folder or a .dat/.txt list whose names all look like ``GGGGNN``."""
    p = Path(path)
    try:
        if not (p.is_dir() or p.suffix.lower() in (".dat", ".txt")):
            return False
        names, _ = _names_from(p)
    except (InputError, OSError):
        return False
    return bool(names) and all(PATTERN.match(n) for n in names[:2000])


def read_holidays(path: Path, options: ReadOptions | None = None) -> Dataset:
    """Return the INRIA Holidays Dataset (protocol ``holidays``)."""
    opts = options or ReadOptions()
    path = Path(path)
    names, paths = _names_from(path)
    if opts.images is not None:
        paths = {n: Path(opts.images) / f"{n}.jpg" for n in names}
    if not names:
        raise InputError(f"{path.name}: no image names")
    bad = [n for n in names if not PATTERN.match(n)]
    if bad:
        raise InputError(f"{path.name}: {len(bad)} names are not Holidays names GGGGNN "
                         f"(4-digit group, 2-digit number), e.g. {examples(bad)}")
    gallery = sorted(set(names))
    if len(gallery) != len(names):
        raise InputError(f"{path.name}: {len(names) - len(gallery)} names are listed twice")
    groups: dict[str, list[int]] = {}
    for i, n in enumerate(gallery):
        groups.setdefault(n[:4], []).append(i)
    queries, no_query = [], []
    for group, members in groups.items():
        name = f"{group}00"
        if name not in set(gallery[i] for i in members):
            no_query.append(group)
            continue
        self_index = next(i for i in members if gallery[i] == name)
        queries.append(build_query(name, name, {"positive": members}, self_index=self_index,
                                   meta={"label": group}))
    notes = []
    if no_query:
        notes.append(f"{len(no_query)} groups have no query image (NN = 00), e.g. "
                     f"{examples(no_query)}; their images stay in the database")
    if not queries:
        raise InputError(f"{path.name}: no query image (a name ending in 00)")
    return Dataset(name="holidays", format=NAME, path=path, gallery=tuple(gallery),
                   queries=tuple(queries), groups=("positive",), protocols=("holidays",),
                   image_paths=paths, notes=tuple(notes))


READER = Reader(NAME, "INRIA Holidays names GGGGNN.jpg (folder or name list)",
                sniff_holidays, read_holidays, priority=8)
