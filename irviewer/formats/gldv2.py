"""Google Landmarks Dataset v2, retrieval task (Weyand et al., CVPR 2020): the solution file
``retrieval_solution_v2.1.csv`` and a submission file, as delf's evaluator reads them.

The reader follows tensorflow/models ``research/delf/delf/python/datasets/
google_landmarks_dataset/dataset_file_io.py`` (commit 3617973; ``ReadSolution``,
``ReadPredictions``) and scores with ``metrics.py`` (commit e4009b2) through the
``gldv2-public`` and ``gldv2-private`` protocols:

* the **solution**: a header ``id,images,Usage``, then one test image per row: its id, the
  index images of its landmark separated by single spaces, and its Usage, ``Public``,
  ``Private`` or ``Ignored``. Ignored rows are left out (reported as removed); the other
  test images are the queries, their index images the positives of the protocol of their
  Usage (a test image of the other Usage has none there: each Usage is averaged over its own
  test images, as delf computes one number per Usage).
* a **submission** (``irviewer eval SOLUTION --ranking submission.csv``): a header
  ``id,images``, then a test image id and up to 100 index image ids separated by spaces.
  delf's rules: an empty row is skipped, a repeated test image or one the solution does not
  list is refused, an Ignored one is passed over, an empty list predicts nothing (the test
  image counts 0), a trailing space is dropped. A repeated index image keeps its place and
  scores nothing, and an id the gallery does not know is a wrong answer at its place: both
  are kept in the list as placeholders (:mod:`irviewer.core.ranking.listed`).

**The gallery** (the index, 761,757 images in GLDv2) is what a descriptor file names, or a
``--row-names`` list of index ids; without either, the index images the solution names (a
submission's other ids then count as wrong, as delf counts them, but are shown by name
only). ``--images DIR`` finds image files under DIR by their id (GLDv2's own
``test/a/b/c/<id>.jpg`` and ``index/a/b/c/<id>.jpg`` folders included).

Where delf's reader would silently score something other than what the file means, this
one refuses with one sentence: a solution row of a scored Usage with no index image (delf
would count one empty id as its only positive), an empty or repeated id within a row (delf
would count it in AP's denominator), a repeated test image (delf keeps the last row), and a
first line that is not the header (delf skips the first line whatever it holds).
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from irviewer.core.dataset import Dataset, SkippedQuery, build_query
from irviewer.core.descriptors import name_key, name_keys
from irviewer.core.errors import InputError, counted, examples
from irviewer.core.ranking.listed import ListedRanking, placeholder, ranking_from_positions
from irviewer.formats.base import ImageFiles, Reader, ReadOptions, list_image_names, read_text

NAME = "gldv2"
SOLUTION_HEADER = ["id", "images", "Usage"]
SUBMISSION_HEADER = ["id", "images"]
USAGES = {"Public": "public", "Private": "private"}
IGNORED = "Ignored"
#: Why an Ignored test image is not a query.
IGNORED_REASON = "Usage Ignored: not scored (delf's ReadSolution leaves it out)"


def _first_line(path: Path) -> str:
    """Return the first line of a file, without BOM and line end ("" when unreadable)."""
    try:
        with Path(path).open("rb") as f:
            head = f.read(256)
    except OSError:
        return ""
    return head.decode("utf-8-sig", "replace").splitlines()[0].strip() if head else ""


def sniff_gldv2(path: Path) -> bool:
    """Return True for a file whose first line is the solution header ``id,images,Usage``."""
    p = Path(path)
    return p.is_file() and _first_line(p).replace(" ", "") == ",".join(SOLUTION_HEADER)


def sniff_gldv2_submission(path: Path) -> bool:
    """Return True for a file whose first line is the submission header ``id,images``."""
    p = Path(path)
    return p.is_file() and _first_line(p).replace(" ", "") == ",".join(SUBMISSION_HEADER)


def _rows(path: Path, header: list[str], what: str) -> list[tuple[int, list[str]]]:
    """Return (line number, fields) of every non-empty row after the header; InputError
    when the first line is not ``header``."""
    text = read_text(path, what)
    rows = list(enumerate(csv.reader(text.splitlines()), start=1))
    if not rows or [f.strip() for f in rows[0][1]] != header:
        found = rows[0][1] if rows else []
        raise InputError(f"{path.name}: the first line must be the header {','.join(header)}, "
                         f"not {','.join(found)[:60]!r}; delf's reader skips the first line "
                         "whatever it holds")
    return [(n, row) for n, row in rows[1:] if row]


def read_gldv2(path: Path, options: ReadOptions) -> Dataset:
    """Return the Dataset of a GLDv2 retrieval solution file (see the module); InputError
    with one sentence naming the file and line for anything delf would misread."""
    path = Path(path)
    where = path.name
    queries: list[tuple[str, str, list[str]]] = []
    ignored: list[str] = []
    seen: dict[str, int] = {}
    for line, row in _rows(path, SOLUTION_HEADER, "a GLDv2 solution file"):
        if len(row) < 3:
            raise InputError(f"{where}, line {line}: expected id,images,Usage, found "
                             f"{counted(len(row), 'field')}")
        test_id, images, usage = row[0].strip(), row[1], row[2].strip()
        if not test_id:
            raise InputError(f"{where}, line {line}: the test image id is empty")
        if test_id in seen:
            raise InputError(f"{where}, line {line}: test image {test_id} is repeated (first "
                             f"on line {seen[test_id]}); delf would keep the last row only")
        seen[test_id] = line
        if usage == IGNORED:
            ignored.append(test_id)
            continue
        if usage not in USAGES:
            raise InputError(f"{where}, line {line}: test image {test_id} has the Usage "
                             f"{usage!r}; it must be Public, Private or Ignored")
        ids = images.split(" ")
        if not images.strip():
            raise InputError(f"{where}, line {line}: test image {test_id} is {usage} but "
                             "lists no index image; delf would count one empty id as its "
                             "only positive")
        if "" in ids:
            raise InputError(f"{where}, line {line}: the index images of {test_id} are not "
                             "separated by single spaces (an empty id); delf would count it "
                             "as a positive")
        if len(set(ids)) != len(ids):
            twice = sorted({i for i in ids if ids.count(i) > 1})
            raise InputError(f"{where}, line {line}: test image {test_id} lists index image "
                             f"{twice[0]} twice; delf would count it twice in AP's "
                             "denominator")
        queries.append((test_id, USAGES[usage], ids))
    if not queries:
        raise InputError(f"{where}: no test image is Public or Private, so there is nothing "
                         "to score")
    gallery, index, notes = _gallery(where, queries, options)
    built = [build_query(test_id, test_id, {usage: [index[i] for i in ids]})
             for test_id, usage, ids in queries]
    usages = [u for u in ("public", "private") if any(q[1] == u for q in queries)]
    if ignored:
        notes.append(f"{counted(len(ignored), 'test image')} with Usage Ignored "
                     f"{'is' if len(ignored) == 1 else 'are'} left out, as delf's "
                     "ReadSolution leaves them out")
    paths = images_by_name(options.images, (*(q[0] for q in queries), *gallery), notes)
    return Dataset(name="Google Landmarks v2 retrieval", format=NAME, path=path,
                   gallery=tuple(gallery), queries=tuple(built), groups=("public", "private"),
                   protocols=tuple(f"gldv2-{u}" for u in usages),
                   skipped_queries=tuple(SkippedQuery(i, IGNORED_REASON) for i in ignored),
                   image_paths=paths, notes=tuple(notes))


def _gallery(where: str, queries: list[tuple[str, str, list[str]]],
             options: ReadOptions) -> tuple[list[str], dict[str, int], list[str]]:
    """Return (gallery names, solution image -> gallery index, notes): the names known from
    a descriptor file or a row-name list, which must hold every index image of the solution
    (matched exactly, else by :func:`name_key`); else the solution's images."""
    named = list(dict.fromkeys(i for _, _, ids in queries for i in ids))
    if options.gallery_names is None:
        return named, {n: i for i, n in enumerate(named)}, [
            f"the gallery is the {len(named):,} index images the solution names (no index "
            "list was given): a submission's other ids count as wrong answers, as delf "
            "counts them, shown by name only"]
    gallery = list(options.gallery_names)
    exact = {n: i for i, n in enumerate(gallery)}
    index = {n: exact[n] for n in named if n in exact}
    if len(index) < len(named):  # 761,757 keys only when some name differs as written
        keyed = dict(zip(name_keys(gallery), range(len(gallery)), strict=True))
        index.update({n: keyed[name_key(n)] for n in named
                      if n not in index and name_key(n) in keyed})
    missing = [n for n in named if n not in index]
    if missing:
        raise InputError(f"{where}: {counted(len(missing), 'index image')} of the "
                         f"solution {'is' if len(missing) == 1 else 'are'} not among the "
                         f"{len(gallery):,} gallery images (the descriptor file's or the "
                         f"row-name list's), e.g. {examples(missing)}")
    return gallery, index, []


class NameIndex:
    """Finds a name's position among ``names``: as written first, else by
    :func:`~irviewer.core.descriptors.name_key` (no folder, no image extension; the keys of
    a 761,757-image index are made only when a name needs them). -1 when absent."""

    def __init__(self, names: tuple[str, ...] | list[str]) -> None:
        self.names = names
        self.exact = {n: i for i, n in enumerate(names)}
        self._keyed: dict[str, int] | None = None

    def find(self, name: str) -> int:
        found = self.exact.get(name)
        if found is not None:
            return found
        if self._keyed is None:
            self._keyed = {}
            for i, key in enumerate(name_keys(self.names)):
                self._keyed.setdefault(key, i)
        return self._keyed.get(name_key(name), -1)


def images_by_name(folder: Path | None, names: tuple[str, ...],
                 notes: list[str]) -> ImageFiles | dict[str, Path]:
    """Return name -> image file for the names found under ``folder`` by file name without
    extension (any depth); {} without a folder."""
    if folder is None:
        return {}
    listed = list_image_names(Path(folder), recursive=True, noun="image folder")
    by_stem = {name_key(f): f for f in listed}
    files = {n: by_stem[name_key(n)] for n in names if name_key(n) in by_stem}
    if len(files) < len(names):
        missing = [n for n in names if n not in files]
        notes.append(f"{counted(len(missing), 'image')} of the dataset "
                     f"{'is' if len(missing) == 1 else 'are'} not in {folder}, e.g. "
                     f"{examples(missing)}; tiles show their names")
    return ImageFiles(Path(folder), files)


def read_gldv2_submission(path: Path, dataset: Dataset) -> tuple[ListedRanking, tuple[str, ...]]:
    """Return (the ranking of a GLDv2 submission file on ``dataset``, notes): each test
    image's list as written, a repeated index image or an id outside the gallery kept as a
    placeholder at its place (see the module); InputError for what delf refuses."""
    path = Path(path)
    where = path.name
    if dataset.format != NAME:
        raise InputError(f"{where}: a Google Landmarks v2 submission (id,images) scores a "
                         f"GLDv2 retrieval solution, not {dataset.label()}")
    queries = {q.name: i for i, q in enumerate(dataset.queries)}
    ignored = {s.name for s in dataset.skipped_queries}
    gallery = NameIndex(dataset.gallery)
    lists: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * dataset.n_queries
    outside: list[str] = []
    seen: dict[str, int] = {}
    n_repeated = n_unknown = 0
    unknown_examples: list[str] = []
    for line, row in _rows(path, SUBMISSION_HEADER, "a GLDv2 submission file"):
        if len(row) < 2:
            raise InputError(f"{where}, line {line}: expected id,images, found "
                             f"{counted(len(row), 'field')}")
        test_id = row[0]
        if test_id in seen:
            raise InputError(f"{where}, line {line}: test image {test_id} is repeated (first "
                             f"on line {seen[test_id]}), which delf refuses")
        seen[test_id] = line
        if test_id in ignored:
            continue
        q = queries.get(test_id)
        if q is None:
            raise InputError(f"{where}, line {line}: test image {test_id!r} is not in the "
                             "solution, which delf refuses (\"test_id is unrecognized\")")
        if not row[1]:
            continue
        ids = row[1].split(" ")
        if not ids[-1]:
            ids = ids[:-1]
        codes = np.empty(len(ids), dtype=np.int64)
        listed: set[int] = set()
        for j, image in enumerate(ids):
            g = gallery.find(image) if image else -1
            if g < 0 or g in listed:
                if g < 0:
                    n_unknown += 1
                    if len(unknown_examples) < 3:
                        unknown_examples.append(image)
                else:
                    n_repeated += 1
                codes[j] = placeholder(len(outside))
                outside.append(image)
            else:
                codes[j] = g
                listed.add(g)
        lists[q] = codes
    notes = _submission_notes(where, dataset, lists, n_repeated, n_unknown, unknown_examples)
    ranking = ranking_from_positions(dataset, lists, None, tuple(outside), where)
    return ranking, notes


def _submission_notes(where: str, dataset: Dataset, lists: list[np.ndarray], n_repeated: int,
                      n_unknown: int, unknown_examples: list[str]) -> tuple[str, ...]:
    notes = []
    empty = [dataset.queries[q].name for q, x in enumerate(lists) if not len(x)]
    if empty:
        one = len(empty) == 1
        notes.append(f"{where}: {counted(len(empty), 'test image')} {'has' if one else 'have'} "
                     f"no prediction and count{'s' if one else ''} 0, as in delf, e.g. "
                     f"{examples(empty)}")
    if n_repeated:
        notes.append(f"{where}: {counted(n_repeated, 'repeated prediction')} "
                     f"{'keeps its' if n_repeated == 1 else 'keep their'} place and score"
                     f"{'s' if n_repeated == 1 else ''} nothing, as delf skips them")
    if n_unknown:
        notes.append(f"{where}: {counted(n_unknown, 'predicted id')} "
                     f"{'is' if n_unknown == 1 else 'are'} not a gallery image and count"
                     f"{'s' if n_unknown == 1 else ''} as wrong at "
                     f"{'its' if n_unknown == 1 else 'their'} place, e.g. "
                     f"{examples(unknown_examples)}")
    return tuple(notes)


READER = Reader(NAME, "a Google Landmarks v2 retrieval solution (id,images,Usage)",
                sniff_gldv2, read_gldv2, priority=14, takes=frozenset({"images"}))
