"""Revisited Oxford and Paris (Radenovic et al., CVPR 2018): ``gnd_roxford5k.pkl``,
``gnd_rparis6k.pkl``.

The pickle (as revisitop's download script fetches it) is a dict: ``imlist`` (database image
names, no extension), ``qimlist`` (query image names) and ``gnd``, one dict per query with
``easy``, ``hard`` and ``junk`` (indices into ``imlist``) and ``bbx`` (the query region
x1, y1, x2, y2). It is loaded with a restricted unpickler: nothing in it can run.

The relevance groups are kept as published; the three protocols of revisitop
``compute_map`` decide what counts: Easy (easy positive; junk and hard ignored), Medium
(easy + hard positive; junk ignored), Hard (hard positive; junk and easy ignored). Queries
with no positive under a protocol (rOxford Easy has two) are reported and skipped by the
evaluation. The query images are not in the database; queries are described from their box.
"""

from __future__ import annotations

import math
from pathlib import Path

from irviewer.core.dataset import Dataset, build_query
from irviewer.core.errors import InputError, examples
from irviewer.formats.base import Reader, ReadOptions
from irviewer.formats.safe_pickle import load_plain_pickle

NAME = "revisited"
GROUPS = ("easy", "hard", "junk")
PROTOCOLS = ("revisited-easy", "revisited-medium", "revisited-hard")


def sniff_revisited(path: Path) -> bool:
    """Return True for a ``gnd_*.pkl`` file (the revisited benchmark's ground truth)."""
    p = Path(path)
    return p.is_file() and p.suffix.lower() == ".pkl" and p.name.lower().startswith("gnd_")


def read_revisited(path: Path, options: ReadOptions | None = None) -> Dataset:
    """Return the revisited Oxford/Paris :class:`Dataset` (three protocols, query boxes).

    ``options.distractors``: a text file of extra gallery names (the 1M distractor set),
    appended to the database. ``options.images``: the folder holding ``<name>.jpg``.
    """
    opts = options or ReadOptions()
    path = Path(path)
    where = path.name
    gnd = load_plain_pickle(path)
    if not isinstance(gnd, dict) or not {"imlist", "qimlist", "gnd"} <= set(gnd):
        found = ", ".join(sorted(map(str, gnd))) if isinstance(gnd, dict) else type(gnd).__name__
        raise InputError(f"{where}: expected a dict with imlist, qimlist and gnd (the revisited "
                         f"Oxford/Paris layout), found {found}")
    imlist, qimlist, entries = gnd["imlist"], gnd["qimlist"], gnd["gnd"]
    for key, value in (("imlist", imlist), ("qimlist", qimlist), ("gnd", entries)):
        if not isinstance(value, list):
            raise InputError(f"{where}: {key} must be a list, found {type(value).__name__}")
    if len(entries) != len(qimlist):
        raise InputError(f"{where}: {len(qimlist)} query names but {len(entries)} gnd entries")
    if not all(isinstance(n, str) for n in (*imlist, *qimlist)):
        raise InputError(f"{where}: imlist and qimlist must hold image names (strings)")
    gallery = list(imlist)
    n_db = len(gallery)
    notes: list[str] = []
    if opts.distractors is not None:
        extra = _read_names(Path(opts.distractors))
        clash = sorted(set(extra) & set(gallery))
        if clash:
            raise InputError(f"{opts.distractors}: {len(clash)} distractor names are already "
                             f"database images, e.g. {examples(clash)}")
        gallery += extra
        notes.append(f"{len(extra)} distractor images added from {Path(opts.distractors).name}")
    index = {name: i for i, name in enumerate(gallery)}
    queries = []
    for qi, (qname, entry) in enumerate(zip(qimlist, entries, strict=True)):
        if not isinstance(entry, dict):
            raise InputError(f"{where}: gnd entry {qi} ({qname}) is not a dict")
        groups = {}
        for group in GROUPS:
            members = entry.get(group, [])
            if not isinstance(members, list) or not all(
                    isinstance(i, int) and not isinstance(i, bool) for i in members):
                raise InputError(f"{where}: query {qname}: {group} must be a list of database "
                                 "indices")
            bad = [i for i in members if not 0 <= i < n_db]
            if bad:
                raise InputError(f"{where}: query {qname}: {group} index {bad[0]} is outside "
                                 f"the database of {n_db} images")
            groups[group] = members
        queries.append(build_query(qname, qname, groups, self_index=index.get(qname, -1),
                                   box=_box(entry.get("bbx"), where, qname)))
    paths = {}
    if opts.images is not None:
        paths = {n: Path(opts.images) / f"{n}.jpg" for n in (*imlist, *qimlist)}
    return Dataset(name=path.stem.removeprefix("gnd_"), format=NAME, path=path,
                   gallery=tuple(gallery), queries=tuple(queries), groups=GROUPS,
                   protocols=PROTOCOLS, image_paths=paths, notes=tuple(notes))


def _box(value: object, where: str, query: str) -> tuple[float, float, float, float] | None:
    if value is None:
        return None
    if not isinstance(value, (list, tuple)) or len(value) != 4 or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        raise InputError(f"{where}: query {query}: bbx must be four numbers x1, y1, x2, y2")
    x1, y1, x2, y2 = (float(v) for v in value)
    if not all(math.isfinite(v) for v in (x1, y1, x2, y2)) or x1 < 0 or y1 < 0 \
            or x2 <= x1 or y2 <= y1:
        raise InputError(f"{where}: query {query}: bbx {[x1, y1, x2, y2]} is not a box "
                         "(need 0 <= x1 < x2 and 0 <= y1 < y2)")
    return x1, y1, x2, y2


def _read_names(path: Path) -> list[str]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot read the distractor list ({e})") from None
    names = [Path(line.strip()).stem if line.strip().lower().endswith(".jpg") else line.strip()
             for line in lines if line.strip()]
    if not names:
        raise InputError(f"{path.name} is empty: a distractor list has one image name per line")
    if len(set(names)) != len(names):
        seen: set[str] = set()
        dups = [n for n in names if n in seen or seen.add(n)]
        raise InputError(f"{path.name}: {len(dups)} distractor names repeat, e.g. "
                         f"{examples(dups)}")
    return names


READER = Reader(NAME, "revisited Oxford/Paris gnd_*.pkl (Easy, Medium, Hard)",
                sniff_revisited, read_revisited, priority=20)
