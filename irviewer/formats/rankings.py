"""Precomputed rankings: result lists made elsewhere (FAISS, a vector database, a cluster).

Accepted in place of descriptors (``irviewer eval DATASET --ranking FILE``):

* TREC run files, ``qid Q0 docid rank score tag`` per line: qids are query names, docids
  gallery names (matched exactly, then without directory and image extension). Each list is
  taken in the order of its rank column — the order the producing system meant. trec_eval
  itself re-sorts by score (ties by docid, descending); when the two orders differ a note
  says so.
* HPatches ``.results`` files (51 patches per query, the query first), for an HPatches
  ``.benchmark`` dataset.
* ``.npz`` with ``indices`` (queries x K: gallery row numbers, -1 padding, or names) and
  optional ``scores`` and ``query_names`` (else the rows follow the dataset's query order).

A list is truncated at its length K. Its metrics follow the rule trec_eval applies with
qrels, and the HPatches benchmark with its top-K lists: a positive not in the list was never
retrieved — it adds nothing to AP or P@k but still counts among the query's positives.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from irviewer.core.dataset import Dataset
from irviewer.core.descriptors import name_key
from irviewer.core.errors import InputError, examples
from irviewer.core.ranking import Ranking, ranking_from_lists


def sniff_ranking(path: Path) -> bool:
    """Return True for an .npz holding ``indices`` or a text file whose first line has six
    fields with ``Q0`` second (a TREC run)."""
    p = Path(path)
    try:
        if p.suffix.lower() == ".npz":
            with np.load(p, allow_pickle=False) as archive:
                return "indices" in archive.files
        with p.open(encoding="utf-8") as f:
            first = f.readline().split()
        return len(first) == 6 and first[1] == "Q0"
    except (OSError, ValueError, UnicodeDecodeError, zipfile.BadZipFile):
        return False


def read_ranking(path: Path, dataset: Dataset) -> tuple[Ranking, tuple[str, ...]]:
    """Return (the truncated :class:`Ranking` in ``path`` for ``dataset``, notes)."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such file")
    if path.is_dir():
        raise InputError(f"{path}: is a folder, not a ranking file")
    if path.suffix.lower() == ".npz":
        return _read_npz(path, dataset), ()
    if path.suffix.lower() == ".results":
        from irviewer.formats.hpatches import read_hpatches_results

        return read_hpatches_results(path, dataset), ()
    return _read_trec(path, dataset)


class _Names:
    """Name -> index, matched exactly first, then by file name without extension."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.exact = {n: i for i, n in enumerate(names)}
        self.loose: dict[str, int] | None = None
        self.names = names

    def get(self, name: str) -> int | None:
        found = self.exact.get(name)
        if found is None:
            if self.loose is None:
                self.loose = {name_key(n): i for i, n in enumerate(self.names)}
            found = self.loose.get(name_key(name))
        return found


def _read_trec(path: Path, dataset: Dataset) -> tuple[Ranking, tuple[str, ...]]:
    queries = _Names(tuple(q.name for q in dataset.queries))
    gallery = _Names(dataset.gallery)
    lists: dict[int, list[tuple[int, float, int, str]]] = {}
    unknown_q: set[str] = set()
    unknown_d: set[str] = set()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot read ({e})") from None
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 6:
            raise InputError(f"{path.name}, line {line_no}: expected 'qid Q0 docid rank score "
                             f"tag', found {len(fields)} fields")
        qid, _, docid, rank_text, score_text, _ = fields
        try:
            rank, score = int(rank_text), float(score_text)
        except ValueError:
            raise InputError(f"{path.name}, line {line_no}: rank {rank_text!r} and score "
                             f"{score_text!r} must be numbers") from None
        q, d = queries.get(qid), gallery.get(docid)
        if q is None:
            unknown_q.add(qid)
            continue
        if d is None:
            unknown_d.add(docid)
            continue
        lists.setdefault(q, []).append((rank, score, d, docid))
    if unknown_q:
        raise InputError(f"{path.name}: {len(unknown_q)} query ids are not queries of "
                         f"{dataset.label()}, e.g. {examples(sorted(unknown_q))}")
    if unknown_d:
        raise InputError(f"{path.name}: {len(unknown_d)} document ids are not gallery images "
                         f"of {dataset.label()}, e.g. {examples(sorted(unknown_d))}")
    depth = max((len(v) for v in lists.values()), default=0)
    if depth == 0:
        raise InputError(f"{path.name}: no result line")
    indices = np.full((dataset.n_queries, depth), -1, dtype=np.int64)
    scores = np.full((dataset.n_queries, depth), np.nan, dtype=np.float32)
    reordered = 0
    for q, entries in lists.items():
        by_rank = sorted(entries, key=lambda e: e[0])
        by_score = sorted(entries, key=lambda e: (-e[1], tuple(-ord(c) for c in e[3])))
        reordered += [e[2] for e in by_rank] != [e[2] for e in by_score]
        indices[q, : len(by_rank)] = [e[2] for e in by_rank]
        scores[q, : len(by_rank)] = [e[1] for e in by_rank]
    notes = []
    missing = dataset.n_queries - len(lists)
    if missing:
        notes.append(f"{path.name}: {missing} queries have no result list (nothing retrieved)")
    if reordered:
        notes.append(f"{path.name}: in {reordered} lists the rank column and the scores "
                     "disagree; irviewer follows the rank column (trec_eval would re-sort by "
                     "score)")
    return ranking_from_lists(dataset, indices, scores, path.name), tuple(notes)


def _read_npz(path: Path, dataset: Dataset) -> Ranking:
    try:
        archive = np.load(path, allow_pickle=False)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as e:
        raise InputError(f"{path.name}: not a readable .npz archive ({e})") from None
    with archive:
        if "indices" not in archive.files:
            raise InputError(f"{path.name}: found keys {', '.join(archive.files)}; a ranking "
                             "needs 'indices' (queries x K) and optionally 'scores'")
        try:
            indices = archive["indices"]
            scores = archive["scores"] if "scores" in archive.files else None
            q_names = archive["query_names"] if "query_names" in archive.files else None
        except ValueError:
            raise InputError(f"{path.name} holds Python objects (pickle); irviewer only reads "
                             "plain arrays") from None
    if indices.ndim != 2:
        raise InputError(f"{path.name}: indices must be a queries x K matrix, got shape "
                         f"{indices.shape}")
    if indices.dtype.kind in "US":
        gallery = _Names(dataset.gallery)
        flat = [str(x) for x in indices.ravel()]
        mapped = [gallery.get(x) if x else -1 for x in flat]
        bad = sorted({x for x, m in zip(flat, mapped, strict=True) if m is None})
        if bad:
            raise InputError(f"{path.name}: {len(bad)} names in indices are not gallery images, "
                             f"e.g. {examples(bad)}")
        indices = np.array(mapped, dtype=np.int64).reshape(indices.shape)
    elif indices.dtype.kind not in "iu":
        raise InputError(f"{path.name}: indices must be integers or names, not {indices.dtype}")
    if q_names is not None:
        order = _Names(tuple(str(x) for x in q_names))
        rows = [order.get(q.name) for q in dataset.queries]
        missing = [q.name for q, r in zip(dataset.queries, rows, strict=True) if r is None]
        if missing:
            raise InputError(f"{path.name}: {len(missing)} queries have no row, e.g. "
                             f"{examples(missing)}")
        indices = indices[rows]
        scores = scores[rows] if scores is not None else None
    return ranking_from_lists(dataset, indices, scores, path.name)
