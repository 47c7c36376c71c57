"""Revisited Oxford and Paris (Radenovic et al., CVPR 2018): ``gnd_roxford5k.pkl``,
``gnd_rparis6k.pkl``.

The pickle (as revisitop's download script fetches it) is a dict: ``imlist`` (database image
names, no extension), ``qimlist`` (query image names) and ``gnd``, one dict per query with
``easy``, ``hard`` and ``junk`` (0-based indices into ``imlist``) and ``bbx`` (the query
region x1, y1, x2, y2). It is loaded with a restricted unpickler: nothing in it can run.

The relevance groups are kept as published; the three protocols of revisitop
``compute_map`` decide what counts: Easy (easy positive; junk and hard ignored), Medium
(easy + hard positive; junk ignored), Hard (hard positive; junk and easy ignored). Queries
with no positive under a protocol (rOxford Easy has two: balliol_000187, hertford_000082)
are reported and skipped by the evaluation. The query images are not in the database;
queries are described from their box.

cirtorch publishes the original Oxford5k/Paris6k in the same layout (``gnd_oxford5k.pkl``,
``gnd_paris6k.pkl``) with ``ok`` (good and ok merged) and ``junk`` instead of easy/hard;
such a file is read with groups ``ok``/``junk`` and the ``oxford`` protocol (cirtorch
``compute_map_and_print``, "old evaluation protocol").
"""

from __future__ import annotations

import math
import pickle
from pathlib import Path

import numpy as np

from irviewer.core.dataset import Box, Dataset, Query, build_query, repeated
from irviewer.core.errors import InputError, counted, examples
from irviewer.core.image_names import strip_image_suffix
from irviewer.formats.base import Reader, ReadOptions, read_bytes, read_text
from irviewer.formats.line_edits import Edit
from irviewer.formats.safe_pickle import load_plain_pickle

NAME = "revisited"
GROUPS = ("easy", "hard", "junk")
PROTOCOLS = ("revisited-easy", "revisited-medium", "revisited-hard")
#: cirtorch's original Oxford5k/Paris6k layout: ``ok`` is good + ok (``good`` stays empty).
OLD_GROUPS = ("good", "ok", "junk")
OLD_PROTOCOLS = ("oxford",)
KEYS = ("imlist", "qimlist", "gnd")
#: A .pkl not named gnd_* is opened by the sniffer only up to this size.
SNIFF_MAX_BYTES = 32 * 1024 * 1024


def sniff_revisited(path: Path) -> bool:
    """Return True for a ``gnd_*.pkl`` file, or a ``.pkl`` whose restricted load is a dict
    with ``imlist``, ``qimlist`` and ``gnd``; never raises (nothing in the file runs)."""
    p = Path(path)
    try:
        if not (p.suffix.lower() == ".pkl" and p.is_file()):
            return False
        if p.name.lower().startswith("gnd_"):
            return True
        if p.stat().st_size > SNIFF_MAX_BYTES:
            return False
        data = load_plain_pickle(p)
    except Exception:  # a sniffer says no; the reader gives the sentence
        return False
    return isinstance(data, dict) and all(k in data for k in KEYS)


def read_revisited(path: Path, options: ReadOptions | None = None) -> Dataset:
    """Return the revisited Oxford/Paris :class:`Dataset`.

    Gallery = ``imlist`` (then ``options.distractors``, one name per line, the 1M
    distractors); queries = ``qimlist`` with groups easy / hard / junk and the box ``bbx``;
    ``self_index`` = -1 unless the query image is in the gallery; protocols Easy, Medium and
    Hard. ``options.images``: the folder holding ``<name>.jpg``. InputError, one sentence,
    for a pickle that is not this layout, an index outside ``imlist``, or a bad box.
    """
    opts = options or ReadOptions()
    path = Path(path)
    where = path.name
    gnd = load_plain_pickle(path)
    if not isinstance(gnd, dict) or not all(k in gnd for k in KEYS):
        found = ", ".join(sorted(map(str, gnd))) if isinstance(gnd, dict) else type(gnd).__name__
        raise InputError(f"{where}: expected a dict with imlist, qimlist and gnd (the revisited "
                         f"Oxford/Paris layout), found {found or 'an empty dict'}")
    imlist, qimlist, entries = gnd["imlist"], gnd["qimlist"], gnd["gnd"]
    for key, value in zip(KEYS, (imlist, qimlist, entries), strict=True):
        if not isinstance(value, (list, tuple)):
            raise InputError(f"{where}: {key} must be a list, found {type(value).__name__}")
    if len(entries) != len(qimlist):
        raise InputError(f"{where}: {len(qimlist)} query names but {len(entries)} gnd entries")
    for key, names in (("imlist", imlist), ("qimlist", qimlist)):
        bad = [i for i, n in enumerate(names) if not isinstance(n, str) or not n]
        if bad:
            raise InputError(f"{where}: {key} must hold image names; "
                             f"{counted(len(bad), 'entry', 'entries')} "
                             f"{'is' if len(bad) == 1 else 'are'} not, e.g. position {bad[0]} "
                             f"({names[bad[0]]!r})")
    groups, protocols = _layout(entries, where)
    gallery = list(imlist)
    n_db = len(gallery)
    notes: list[str] = []
    if groups == OLD_GROUPS:
        notes.append(f"{where}: cirtorch's original Oxford/Paris layout (ok = good + ok); "
                     "scored with the oxford protocol")
    if opts.distractors is not None:
        extra = _read_distractors(Path(opts.distractors))
        clash = sorted(set(extra) & set(gallery))
        if clash:
            raise InputError(f"{Path(opts.distractors).name}: "
                             f"{counted(len(clash), 'distractor name')} "
                             f"{'is' if len(clash) == 1 else 'are'} already "
                             f"{'a database image' if len(clash) == 1 else 'database images'} "
                             f"of {where}, e.g. {examples(clash)}")
        gallery += extra
        notes.append(f"{counted(len(extra), 'distractor image')} added from "
                     f"{Path(opts.distractors).name}")
    index = {name: i for i, name in enumerate(gallery)}
    queries = [_query(qname, entry, groups, n_db, index, where)
               for qname, entry in zip(qimlist, entries, strict=True)]
    paths = {}
    if opts.images is not None:
        paths = {n: Path(opts.images) / f"{n}.jpg" for n in (*imlist, *qimlist)}
    return Dataset(name=path.stem.removeprefix("gnd_"), format=NAME, path=path,
                   gallery=tuple(gallery), queries=tuple(queries), groups=groups,
                   protocols=protocols, image_paths=paths, notes=tuple(notes))


def _layout(entries: list[object] | tuple[object, ...],
            where: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Return (groups, protocols): revisited (easy/hard/junk) or cirtorch's original
    Oxford/Paris (ok/junk); InputError when an entry is not a dict or lacks its lists."""
    dicts: list[dict[object, object]] = []
    for qi, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise InputError(f"{where}: gnd entry {qi} is a {type(entry).__name__}, not a dict "
                             "with easy, hard, junk and bbx")
        dicts.append(entry)
    old = bool(dicts) and all("ok" in e and "easy" not in e and "hard" not in e for e in dicts)
    needed = ("ok", "junk") if old else GROUPS
    for qi, entry in enumerate(dicts):
        lacking = [k for k in needed if k not in entry]
        if lacking:
            raise InputError(f"{where}: gnd entry {qi} has no {' or '.join(lacking)} list "
                             f"(it has {', '.join(sorted(map(str, entry))) or 'nothing'})")
    return (OLD_GROUPS, OLD_PROTOCOLS) if old else (GROUPS, PROTOCOLS)


def _query(qname: str, entry: dict[str, object], groups: tuple[str, ...], n_db: int,
           index: dict[str, int], where: str) -> Query:
    """Return one query: its published groups (indices checked against ``imlist``) and box."""
    members: dict[str, list[int]] = {}
    for group in groups:
        if group == "good" and group not in entry:
            continue  # cirtorch's layout merges good into ok
        value = entry[group]
        if not isinstance(value, (list, tuple)) or not all(
                isinstance(i, int) and not isinstance(i, bool) for i in value):
            raise InputError(f"{where}: query {qname}: {group} must be a list of database "
                             "indices")
        bad = [i for i in value if not 0 <= i < n_db]
        if bad:
            raise InputError(f"{where}: query {qname}: {group} index {bad[0]} is outside "
                             f"the database of {n_db} images (0..{n_db - 1})")
        members[group] = list(value)
    return build_query(qname, qname, members, self_index=index.get(qname, -1),
                       box=_box(entry.get("bbx"), where, qname))


def _box(value: object, where: str, query: str) -> Box | None:
    """Return the query box (x1, y1, x2, y2) of ``bbx``, None when absent."""
    if value is None:
        return None
    if not isinstance(value, (list, tuple)) or len(value) != 4 or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        raise InputError(f"{where}: query {query}: bbx must be four numbers x1, y1, x2, y2")
    x1, y1, x2, y2 = (float(v) for v in value)
    if not all(math.isfinite(v) for v in (x1, y1, x2, y2)) or x1 < 0 or y1 < 0 \
            or x2 <= x1 or y2 <= y1:
        raise InputError(f"{where}: query {query}: bbx {x1:g} {y1:g} {x2:g} {y2:g} is not a "
                         "box (need 0 <= x1 < x2 and 0 <= y1 < y2)")
    return x1, y1, x2, y2


def _read_distractors(path: Path) -> list[str]:
    """Return the distractor names of a text file, one per line as written (a sub-folder part
    such as revisitop1m's is kept, a final image extension dropped, blank lines skipped); InputError
    for an empty file or a repeated name."""
    lines = read_text(path, "a distractor list").splitlines()
    names = [strip_image_suffix(s) for s in (line.strip() for line in lines) if s]
    if not names:
        raise InputError(f"{path.name} is empty: a distractor list has one image name per line")
    if len(set(names)) != len(names):
        dups = repeated(names)
        raise InputError(f"{path.name}: {counted(len(dups), 'distractor name')} "
                         f"{'repeats' if len(dups) == 1 else 'repeat'}, e.g. {examples(dups)}")
    return names


READER = Reader(NAME, "revisited Oxford/Paris gnd_*.pkl (Easy, Medium, Hard)",
                sniff_revisited, read_revisited, priority=20,
                takes=frozenset({"images", "distractors"}))


def gnd_edit(dataset: Dataset) -> Edit:
    """Return the corrected gnd pickle of ``dataset`` (its source pickle with each corrected
    list edited) and how many list entries were removed and added: the source
    pickle's dict keeps every key, query entry and list as published (same order, same
    repeated indices); a list whose group changed loses the indices of images it no longer
    holds and gains the new ones, ascending, at its end (``ok`` / ``junk`` in cirtorch's
    layout, good merged into ok). Pickled with the source file's protocol; the published
    bytes when nothing changed. Only builtin types, so it loads through
    :func:`~irviewer.formats.safe_pickle.load_plain_pickle`. InputError when a group holds a
    distractor image (gnd indices point into ``imlist``)."""
    if dataset.path is None:
        raise InputError(f"{dataset.label()}: the source gnd pickle is unknown")
    data = read_bytes(Path(dataset.path), "a gnd pickle")
    gnd = load_plain_pickle(Path(dataset.path))
    if not isinstance(gnd, dict):
        raise InputError(f"{Path(dataset.path).name}: not a gnd dict")
    n_db = len(gnd["imlist"])
    old_layout = dataset.groups == OLD_GROUPS
    entries = []
    removed = added = 0
    for q, entry in zip(dataset.queries, gnd["gnd"], strict=True):
        lists = {"ok": np.union1d(q.group("good"), q.group("ok")), "junk": q.group("junk")} \
            if old_layout else {g: q.group(g) for g in GROUPS}
        edited = dict(entry)
        for group, members in lists.items():
            beyond = members[members >= n_db]
            if len(beyond):
                raise InputError(f"{dataset.label()}: query {q.name}: {group} holds the "
                                 f"distractor {dataset.gallery[int(beyond[0])]}, which a gnd "
                                 "file cannot list (its indices point into imlist)")
            published = [int(i) for i in entry.get(group, [])]
            wanted = set(members.tolist())
            kept = [i for i in published if i in wanted]
            new = sorted(wanted - set(published))
            if len(kept) < len(published) or new:
                removed += len(published) - len(kept)
                added += len(new)
                edited[group] = kept + new
        entries.append(edited)
    if not removed and not added:
        return Edit(data)
    protocol = data[1] if data[:1] == pickle.PROTO and data[1] <= pickle.HIGHEST_PROTOCOL \
        else pickle.DEFAULT_PROTOCOL
    return Edit(pickle.dumps({**gnd, "gnd": entries}, protocol=protocol), 0, removed, added,
                unit="list entries")
