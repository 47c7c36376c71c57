"""Precomputed rankings: result lists made elsewhere (FAISS, a vector database, a cluster).

Some users search a huge index with their own tools and want irviewer to inspect and score
the result (``irviewer eval DATASET --ranking FILE``, in place of descriptors). Accepted:

* **TREC run files**, one result per line, ``qid Q0 docid rank score tag`` separated by
  white space — the format of trec_eval (NIST, https://github.com/usnistgov/trec_eval,
  README "trec_top_file"). ``qid`` is a query name and ``docid`` a gallery image name of the
  dataset. The second and last fields are not used.

  *Order.* trec_eval ignores the rank column: it re-sorts every list by score, descending,
  ties broken by docid in *descending* ``strcmp`` order (``comp_sim_docno`` in
  ``form_res_rels.c``). irviewer keeps the order the producing system wrote in the rank
  column: each list is sorted by rank, and only entries of equal rank (a constant rank
  column, such as the ``0`` of trec_eval's own example) are ordered as trec_eval orders
  them. Where that order differs from trec_eval's a note says so, in two cases: the scores
  rise somewhere down the rank column (typically distances, which FAISS returns ascending —
  trec_eval would turn such a list upside down; write ``-distance`` for it), or equal
  scores are ranked in an order other than docid-descending (trec_eval may then score the
  file differently from irviewer).

* **Google Landmarks v2 submissions** (a first line ``id,images``) and **DISC21
  predictions** (``query_id,reference_id,score``), read as delf's and isc2021's evaluators
  read them (:mod:`irviewer.formats.gldv2`, :mod:`irviewer.formats.disc21`): every listed
  entry keeps its place, one that is no gallery image included.

* **HPatches ``.results``** files (the query patch, then 50 results per line), for an
  HPatches ``.benchmark`` dataset (:func:`irviewer.formats.hpatches.read_hpatches_results`).

* **``.npz``** archives (recognised by content, any suffix) with ``indices``, a queries x K
  array of gallery row numbers (integers, ``-1`` pads a shorter list, as FAISS pads) or of
  gallery names (``""`` pads); optional ``scores`` (same shape, any sign; only displayed);
  optional ``query_names`` (one per row; else the rows follow the dataset's query order);
  optional ``gallery_names`` (the name of each row of *your* index: integer indices are
  then rows of this list, which is what FAISS returns when the index was built in another
  order than the dataset's gallery). Without ``gallery_names`` integers are positions in
  the dataset's gallery order. Archives holding Python objects (pickles) are refused.

Names are matched exactly first, then with an image extension stripped (``.jpg``, ...) on
both sides, then by file name without folder and extension; a name that matches several
dataset names at the first level where it matches at all is an error, never a guess.
Result lists of queries that the dataset reader skipped are ignored (noted); a query with
no list is allowed — nothing was retrieved for it — and noted.

**Metrics over a truncated list.** A list stops at its length K. irviewer scores it the way
the benchmarks that define scoring of result lists do: a positive that is not in the list
was never retrieved — it adds nothing to AP or P@k, yet still counts among the query's
positives (AP's denominator). This is trec_eval's rule for a run scored against qrels: its
``map`` sums precision at each relevant document retrieved and divides by every relevant
document of the qrels (``m_map.c``). HPatches' own protocol divides by the positives within
its list instead (VLFeat ``vl_pr``); the ``hpatches-*`` protocols say so (``ap_positives``).
"""

from __future__ import annotations

import math
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from irviewer.core.dataset import Dataset
from irviewer.core.descriptors import name_key
from irviewer.core.errors import InputError, examples
from irviewer.core.image_names import strip_image_suffix
from irviewer.core.ranking import Ranking, ranking_from_lists
from irviewer.formats.base import read_text
from irviewer.formats.listed_csv import read_listed_csv, sniff_listed_csv
from irviewer.io.npz import load_npz

#: :meth:`NameMatcher.find` results that are not an index.
UNKNOWN, AMBIGUOUS = -1, -2

_ZIP_MAGIC = b"PK\x03\x04"
_NPY_MAGIC = b"\x93NUMPY"
TREC_FIELDS = "'qid Q0 docid rank score tag'"


def sniff_ranking(path: Path) -> bool:
    """Return True when ``path`` looks like a ranking file: an archive holding ``indices``,
    an HPatches ``.results`` file, or a text file whose first line is a TREC run line (six
    fields, an integer rank and a numeric score). Cheap; never raises."""
    p = Path(path)
    try:
        if not p.is_file():
            return False
        with p.open("rb") as f:
            head = f.read(4096)
        if head.startswith(_ZIP_MAGIC):
            with load_npz(p) as archive:
                return "indices" in archive.files
        if p.suffix.lower() == ".results":
            return True
        if sniff_listed_csv(p):
            return True
        first = next((line for line in head.decode("utf-8-sig", "replace").splitlines()
                      if line.strip()), "")
        fields = first.split()
        if len(fields) != 6:
            return False
        int(fields[3])
        float(fields[4])
        return True
    except Exception:  # a sniffer never raises: anything unreadable is not ours
        return False


def read_ranking(path: Path, dataset: Dataset,
                 pairs: str | None = None) -> tuple[Ranking, tuple[str, ...]]:
    """Return (the truncated :class:`~irviewer.core.ranking.Ranking` stored in ``path`` for
    ``dataset``, notes for the user).

    The format is recognised by content: a zip archive is an ``.npz``, a ``.results`` file an
    HPatches result file, anything else a TREC run (see the module docstring for each
    format, its order and the truncated-list rule). InputError with one sentence for a
    missing file, a malformed line (file and line), unknown or ambiguous names (count and
    examples), an image listed twice for one query, wrong array shapes or types, and
    archives holding pickled objects.
    """
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such file")
    if path.is_dir():
        raise InputError(f"{path}: is a folder, not a ranking file")
    try:
        with path.open("rb") as f:
            head = f.read(8)
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror})") from None
    if head.startswith(_ZIP_MAGIC):
        return _read_npz(path, dataset)
    if head.startswith(_NPY_MAGIC):
        raise InputError(f"{path.name}: a .npy file holds one bare array; save an .npz with "
                         "'indices' (and optionally 'scores', 'query_names', 'gallery_names')")
    if path.suffix.lower() == ".results":
        from irviewer.formats.hpatches import read_hpatches_results

        return read_hpatches_results(path, dataset), ()
    if sniff_listed_csv(path):  # a GLDv2 submission, DISC21 predictions (pairs: their cap)
        return read_listed_csv(path, dataset, pairs)
    return _read_trec(path, dataset)


class NameMatcher:
    """Finds a dataset name (a query or a gallery image) from a name written in a result file.

    Levels, first match wins: the exact name; the name without an image extension, on both
    sides; the file name without folder and extension, on both sides. A key that several
    dataset names share is ambiguous at its level and matches none of them.
    """

    def __init__(self, names: Iterable[str]) -> None:
        self.names = tuple(names)
        self.exact = {n: i for i, n in enumerate(self.names)}
        self._levels: list[dict[str, int]] | None = None
        self._cache: dict[str, int] = {}

    def find(self, name: str) -> int:
        """Return the index of ``name``, or UNKNOWN, or AMBIGUOUS."""
        found = self.exact.get(name)
        if found is not None:
            return found
        found = self._cache.get(name)
        if found is None:
            found = UNKNOWN
            for key, level in zip(_KEYS, self._loose(), strict=True):
                hit = level.get(key(name))
                if hit is not None:
                    found = hit
                    break
            self._cache[name] = found
        return found

    def candidates(self, name: str) -> list[str]:
        """Return the dataset names an ambiguous ``name`` could mean."""
        for key in _KEYS:
            same = [n for n in self.names if key(n) == key(name)]
            if same:
                return same
        return []

    def _loose(self) -> list[dict[str, int]]:
        if self._levels is None:
            self._levels = []
            for key in _KEYS:
                level: dict[str, int] = {}
                for i, n in enumerate(self.names):
                    k = key(n)
                    level[k] = AMBIGUOUS if k in level else i
                self._levels.append(level)
        return self._levels


_KEYS: tuple[Callable[[str], str], ...] = (strip_image_suffix, name_key)


def _ambiguous(where: str, kind: str, name: str, matcher: NameMatcher) -> InputError:
    same = matcher.candidates(name)
    return InputError(f"{where}: the {kind} {name} matches {len(same)} names of the dataset "
                      f"({examples(same)}); write the full name")


# -- TREC runs -----------------------------------------------------------------------------

def _read_trec(path: Path, dataset: Dataset) -> tuple[Ranking, tuple[str, ...]]:
    text = read_text(path, "a TREC run")
    name = path.name
    queries = NameMatcher(q.name for q in dataset.queries)
    skipped = NameMatcher(s.name for s in dataset.skipped_queries)
    gallery = NameMatcher(dataset.gallery)
    lists: dict[int, list[tuple[int, float, str, int]]] = {}
    first_seen: dict[tuple[int, int], int] = {}
    unknown_q: dict[str, int] = {}
    unknown_d: dict[str, int] = {}
    skipped_q: dict[str, int] = {}
    n_lines = 0
    for line_no, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        n_lines += 1
        where = f"{name}, line {line_no}"
        if len(fields) != 6:
            raise InputError(f"{where}: expected 6 fields {TREC_FIELDS}, found {len(fields)}")
        qid, _iteration, docid, rank_text, score_text, _tag = fields
        try:
            rank = int(rank_text)
        except ValueError:
            raise InputError(f"{where}: the rank {rank_text!r} (4th field) is not an "
                             "integer") from None
        try:
            score = float(score_text)
        except ValueError:
            raise InputError(f"{where}: the score {score_text!r} (5th field) is not a "
                             "number") from None
        if not math.isfinite(score):
            raise InputError(f"{where}: the score {score_text!r} (5th field) is not a finite "
                             "number")
        q = queries.find(qid)
        if q == AMBIGUOUS:
            raise _ambiguous(where, "query id", qid, queries)
        if q == UNKNOWN:
            if skipped.find(qid) >= 0:
                skipped_q.setdefault(qid, line_no)
            else:
                unknown_q.setdefault(qid, line_no)
            continue
        g = gallery.find(docid)
        if g == AMBIGUOUS:
            raise _ambiguous(where, "document id", docid, gallery)
        if g == UNKNOWN:
            unknown_d.setdefault(docid, line_no)
            continue
        first = first_seen.setdefault((q, g), line_no)
        if first != line_no:
            raise InputError(f"{where}: query {qid} lists gallery image {dataset.gallery[g]} "
                             f"a second time (first on line {first})")
        lists.setdefault(q, []).append((rank, score, docid, g))
    if unknown_q:
        raise InputError(f"{name}: {len(unknown_q)} query ids are not queries of "
                         f"{dataset.label()}, e.g. {_with_lines(unknown_q)}")
    if unknown_d:
        raise InputError(f"{name}: {len(unknown_d)} document ids are not gallery images of "
                         f"{dataset.label()}, e.g. {_with_lines(unknown_d)}")
    if n_lines == 0:
        raise InputError(f"{name}: no result line; a TREC run has one line {TREC_FIELDS} "
                         "per result")
    depth = max((len(v) for v in lists.values()), default=0)
    indices = np.full((dataset.n_queries, depth), -1, dtype=np.int64)
    scores = np.full((dataset.n_queries, depth), np.nan, dtype=np.float32)
    rising: list[str] = []
    tie_order: list[str] = []
    for q, entries in lists.items():
        ordered = _rank_order(entries)
        trec = _trec_eval_order(entries)
        if ordered != trec:
            values = np.array([e[1] for e in ordered])
            qname = dataset.queries[q].name
            (rising if np.any(np.diff(values) > 0) else tie_order).append(qname)
        indices[q, :len(ordered)] = [e[3] for e in ordered]
        scores[q, :len(ordered)] = [e[1] for e in ordered]
    notes = []
    if skipped_q:
        notes.append(f"{name}: result lists of {len(skipped_q)} queries that {dataset.label()} "
                     f"skipped are ignored, e.g. {examples(skipped_q)}")
    no_list = [qr.name for i, qr in enumerate(dataset.queries) if i not in lists]
    if no_list:
        notes.append(_no_list_note(name, no_list, dataset.n_queries))
    if rising:
        notes.append(f"{name}: in {len(rising)} lists the score rises down the rank column, "
                     f"e.g. {examples(rising)}; irviewer follows the rank column, trec_eval "
                     "would re-sort by descending score (for distances, write -distance)")
    if tie_order:
        notes.append(f"{name}: in {len(tie_order)} lists equal scores are ranked in the rank "
                     f"column's order, e.g. {examples(tie_order)}; irviewer keeps it, trec_eval "
                     "would order them by docid, descending")
    return ranking_from_lists(dataset, indices, scores, name), tuple(notes)


def _rank_order(entries: list[tuple[int, float, str, int]]) -> list[tuple[int, float, str, int]]:
    """Return entries by rank; entries of equal rank as trec_eval orders them."""
    return sorted(_trec_eval_order(entries), key=lambda e: e[0])


def _trec_eval_order(entries: list[tuple[int, float, str, int]]
                     ) -> list[tuple[int, float, str, int]]:
    """Return entries as trec_eval orders them: score descending, then docid descending
    (``comp_sim_docno``: ``strcmp(p2->docno, p1->docno)``; Python compares code points,
    which for UTF-8 is the byte order strcmp uses)."""
    by_docid = sorted(entries, key=lambda e: e[2], reverse=True)
    return sorted(by_docid, key=lambda e: -e[1])


def _with_lines(first_lines: dict[str, int]) -> str:
    return examples(f"{n} (line {line})" for n, line in first_lines.items())


def _no_list_note(name: str, no_list: list[str], n_queries: int) -> str:
    return (f"{name}: {len(no_list)} of {n_queries} queries have no result list, e.g. "
            f"{examples(no_list)}: nothing was retrieved for them, so each of their positives "
            "counts as missed")


# -- .npz archives -------------------------------------------------------------------------

NPZ_KEYS = ("indices", "scores", "query_names", "gallery_names")


def _read_npz(path: Path, dataset: Dataset) -> tuple[Ranking, tuple[str, ...]]:
    name = path.name
    arrays = _load_npz(path)
    indices = arrays["indices"]
    if indices.ndim != 2:
        raise InputError(f"{name}: 'indices' must be a queries x K matrix, found shape "
                         f"{indices.shape}")
    scores = arrays.get("scores")
    if scores is not None:
        if scores.shape != indices.shape:
            raise InputError(f"{name}: 'scores' has shape {scores.shape} but 'indices' has "
                             f"shape {indices.shape}; they must match entry for entry")
        if scores.dtype.kind not in "fiu":
            raise InputError(f"{name}: 'scores' must be numbers, not {scores.dtype}")
    gallery = NameMatcher(dataset.gallery)
    gallery_idx = _gallery_indices(name, indices, arrays.get("gallery_names"), gallery, dataset)
    rows, notes = _query_rows(name, indices.shape[0], arrays.get("query_names"), dataset)
    n_q, depth = dataset.n_queries, indices.shape[1]
    dense = np.full((n_q, depth), -1, dtype=np.int64)
    values = np.full((n_q, depth), np.nan, dtype=np.float32)
    has_row = rows >= 0
    dense[has_row] = gallery_idx[rows[has_row]]
    if scores is not None:
        values[has_row] = scores[rows[has_row]]
    empty = [q.name for q, ok, row in zip(dataset.queries, has_row, dense, strict=True)
             if ok and not np.any(row >= 0)]
    if empty:
        notes.append(f"{name}: {len(empty)} of {n_q} queries have an empty result list, e.g. "
                     f"{examples(empty)}: nothing was retrieved for them, so each of their "
                     "positives counts as missed")
    return ranking_from_lists(dataset, dense, values, name), tuple(notes)


def _load_npz(path: Path) -> dict[str, np.ndarray]:
    """Return the ranking arrays of an .npz, refusing pickled objects."""
    name = path.name
    try:
        archive = load_npz(path)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as e:
        raise InputError(f"{name}: not a readable .npz archive ({e})") from None
    out: dict[str, np.ndarray] = {}
    with archive:
        if "indices" not in archive.files:
            raise InputError(f"{name}: holds {', '.join(archive.files) or 'no array'}; a "
                             "ranking needs 'indices' (queries x K) and optionally 'scores', "
                             "'query_names', 'gallery_names'")
        for key in NPZ_KEYS:
            if key not in archive.files:
                continue
            try:
                out[key] = archive[key]
            except ValueError:
                raise InputError(f"{name}: '{key}' holds Python objects (a pickle), which "
                                 "irviewer does not load; save plain number or string "
                                 "arrays") from None
            except (zipfile.BadZipFile, OSError, EOFError) as e:
                raise InputError(f"{name}: '{key}' cannot be read ({e})") from None
    return out


def _strings(name: str, key: str, values: np.ndarray) -> list[str]:
    """Return a 1-D string array as Python strings (bytes decoded as UTF-8)."""
    if values.ndim != 1:
        raise InputError(f"{name}: '{key}' must be a list of names, found shape {values.shape}")
    if values.dtype.kind == "S":
        try:
            return [v.decode("utf-8") for v in values.tolist()]
        except UnicodeDecodeError:
            raise InputError(f"{name}: '{key}' holds bytes that are not UTF-8") from None
    if values.dtype.kind != "U":
        raise InputError(f"{name}: '{key}' must hold names (strings), not {values.dtype}")
    return [str(v) for v in values.tolist()]


def _gallery_indices(name: str, indices: np.ndarray, gallery_names: np.ndarray | None,
                     gallery: NameMatcher, dataset: Dataset) -> np.ndarray:
    """Return ``indices`` as dataset gallery indices (-1 for padding)."""
    kind = indices.dtype.kind
    if kind in "US":
        flat = _strings(name, "indices", indices.ravel())
        return _names_to_gallery(name, "names in 'indices'", flat, gallery,
                                 dataset).reshape(indices.shape)
    if kind not in "iu":
        raise InputError(f"{name}: 'indices' must hold gallery row numbers (integers) or "
                         f"names, not {indices.dtype}")
    idx = indices.astype(np.int64)
    if gallery_names is not None:
        names = _strings(name, "gallery_names", gallery_names)
        bad = (idx < -1) | (idx >= len(names))
        if bad.any():
            raise InputError(f"{name}: {int(bad.sum())} entries of 'indices' are not rows of "
                             f"'gallery_names' (0..{len(names) - 1}, -1 pads), e.g. "
                             f"{examples(np.unique(idx[bad]).tolist())}")
        used = np.unique(idx[idx >= 0])
        mapped = np.full(len(names) + 1, -1, dtype=np.int64)  # the last slot maps -1
        mapped[used] = _names_to_gallery(name, "names in 'gallery_names' that 'indices' uses",
                                         [names[i] for i in used], gallery, dataset)
        return mapped[idx]
    n_g = dataset.n_gallery
    bad = (idx < -1) | (idx >= n_g)
    if bad.any():
        raise InputError(f"{name}: {int(bad.sum())} entries of 'indices' are outside the "
                         f"{n_g} gallery images of {dataset.label()} (0..{n_g - 1}, -1 pads), "
                         f"e.g. {examples(np.unique(idx[bad]).tolist())}; if they are rows of "
                         "your own index, save its image names as 'gallery_names'")
    return idx


def _names_to_gallery(name: str, what: str, names: list[str], gallery: NameMatcher,
                      dataset: Dataset) -> np.ndarray:
    out = np.array([gallery.find(n) if n else -1 for n in names], dtype=np.int64)
    ambiguous = [n for n, g in zip(names, out, strict=True) if n and g == AMBIGUOUS]
    if ambiguous:
        raise _ambiguous(name, "name", ambiguous[0], gallery)
    unknown = sorted({n for n, g in zip(names, out, strict=True) if n and g == UNKNOWN})
    if unknown:
        raise InputError(f"{name}: {len(unknown)} {what} are not gallery images of "
                         f"{dataset.label()}, e.g. {examples(unknown)}")
    return out


def _query_rows(name: str, n_rows: int, query_names: np.ndarray | None,
                dataset: Dataset) -> tuple[np.ndarray, list[str]]:
    """Return (the row of each dataset query, -1 for none; notes)."""
    n_q = dataset.n_queries
    if query_names is None:
        if n_rows != n_q:
            raise InputError(f"{name}: 'indices' has {n_rows} rows but {dataset.label()} has "
                             f"{n_q} queries; save 'query_names' to say which row is which "
                             "query")
        return np.arange(n_q, dtype=np.int64), []
    names = _strings(name, "query_names", query_names)
    if len(names) != n_rows:
        raise InputError(f"{name}: {len(names)} 'query_names' for {n_rows} rows of 'indices'")
    queries = NameMatcher(q.name for q in dataset.queries)
    skipped = NameMatcher(s.name for s in dataset.skipped_queries)
    rows = np.full(n_q, -1, dtype=np.int64)
    unknown: list[str] = []
    ignored: list[str] = []
    repeated: list[str] = []
    for row, qname in enumerate(names):
        q = queries.find(qname)
        if q == AMBIGUOUS:
            raise _ambiguous(name, "query name", qname, queries)
        if q == UNKNOWN:
            (ignored if skipped.find(qname) >= 0 else unknown).append(qname)
        elif rows[q] >= 0:
            repeated.append(qname)
        else:
            rows[q] = row
    if unknown:
        raise InputError(f"{name}: {len(unknown)} 'query_names' are not queries of "
                         f"{dataset.label()}, e.g. {examples(unknown)}")
    if repeated:
        raise InputError(f"{name}: {len(repeated)} queries have more than one row in "
                         f"'query_names', e.g. {examples(repeated)}")
    notes = []
    if ignored:
        notes.append(f"{name}: result lists of {len(ignored)} queries that {dataset.label()} "
                     f"skipped are ignored, e.g. {examples(ignored)}")
    no_list = [q.name for q, r in zip(dataset.queries, rows, strict=True) if r < 0]
    if no_list:
        notes.append(_no_list_note(name, no_list, n_q))
    return rows, notes
