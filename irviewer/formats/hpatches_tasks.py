"""HPatches retrieval task lists of hpatches-benchmark (CVPR 2017): ``tasks/`` with
``retr_queries_split-<x>.csv`` and ``retr_distractors_split-<x>.csv`` (header ``s,idx``, one
``<sequence>,<patch index>`` per line, 0-based indices).

The protocol, from ``matlab/+bench/+retrieval/eval.m`` (the code behind the paper's
numbers; the Python ``eval_retrieval`` in ``python/utils/tasks.py`` is marked WIP):

* a query is the patch ``idx`` of the sequence's reference image (``ref``);
* its positives are the same patch in the 5 other images of the sequence for one level of
  geometric noise: ``e1..e5`` (easy), ``h1..h5`` (hard) or ``t1..t5`` (tough) — one
  protocol per level, ``hpatches-retrieval-easy/-hard/-tough``;
* the negatives are the split's distractors (reference-image patches, file order), the
  same for every query, except that distractors of the query's own sequence are ignored
  (label 0 in ``eval.m``);
* the positives of *other* queries are never in a query's list;
* the score is the negative squared L2 distance of the raw descriptors; AP is the sum of
  the precision at each positive over the 5 positives (finite-sum, all positives ranked);
  the result is the mean over queries per split and noise level.

``eval.m`` keeps only the first 2,000 distractors by default (``num_neg``) to save memory,
and its help says the paper used them all (``'num_neg', inf``): irviewer uses them all.

A query's own positives and the shared distractors are ranked per query by
:mod:`irviewer.core.pool_ranking`. The gallery lists the distractors first (their file
order, which breaks ties), then each query's 15 corresponding patches. Descriptors come
from a ``descriptors/<name>/<sequence>/<type>.csv`` folder (row = patch index) or any
descriptor file with rows named ``<sequence>.<type>.<index>``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from irviewer.core.dataset import Dataset, build_query
from irviewer.core.descriptors import Descriptors, name_key
from irviewer.core.errors import InputError, counted, examples
from irviewer.core.pool_ranking import iter_rank_in_pools
from irviewer.core.ranking import Ranking
from irviewer.formats.base import Reader, ReadOptions, read_text

NAME = "hpatches-tasks"
NOISE = {"easy": "e", "hard": "h", "tough": "t"}
QUERIES = re.compile(r"^retr_queries_split-([A-Za-z0-9_]+)\.csv$")
SEQUENCE = re.compile(r"^[A-Za-z0-9_\-]+$")


def _splits(folder: Path) -> dict[str, Path]:
    """Return split name -> queries file of a tasks folder (empty when none or unreadable)."""
    try:
        return {m.group(1): p for p in folder.iterdir() if (m := QUERIES.match(p.name))}
    except OSError:
        return {}


def sniff_hpatches_tasks(path: Path) -> bool:
    """Return True for a ``retr_queries_split-*.csv`` file or a folder holding one."""
    p = Path(path)
    if p.is_file():
        return bool(QUERIES.match(p.name))
    return p.is_dir() and bool(_splits(p))


def _read_list(path: Path, what: str) -> list[tuple[str, int]]:
    """Return the ``(sequence, index)`` rows of a task list; InputError naming file and line."""
    lines = read_text(path, what).splitlines()
    rows = [(n, line.strip()) for n, line in enumerate(lines, start=1) if line.strip()]
    if not rows:
        raise InputError(f"{path.name} is empty; it should start with the header s,idx")
    if rows[0][1].replace(" ", "") != "s,idx":
        raise InputError(f"{path.name}, line {rows[0][0]}: expected the header s,idx, found "
                         f"{rows[0][1][:40]!r}")
    out: list[tuple[str, int]] = []
    for n, line in rows[1:]:
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != 2:
            raise InputError(f"{path.name}, line {n}: expected 'sequence,index', found "
                             f"{counted(len(fields), 'field')}")
        seq, idx = fields
        if not SEQUENCE.match(seq):
            raise InputError(f"{path.name}, line {n}: {seq!r} is not a sequence name")
        if not idx.isdigit():
            raise InputError(f"{path.name}, line {n}: the patch index {idx!r} must be a "
                             "whole number from 0")
        out.append((seq, int(idx)))
    if not out:
        raise InputError(f"{path.name} has a header but no row")
    return out


def _split_files(path: Path) -> tuple[str, Path, Path]:
    """Return (split, queries file, distractors file) for a queries file or a folder."""
    p = Path(path)
    if p.is_file():
        m = QUERIES.match(p.name)
        if m is None:
            raise InputError(f"{p.name}: not an HPatches retr_queries_split-<x>.csv file")
        split, queries = m.group(1), p
    else:
        found = _splits(p)
        if not found:
            raise InputError(f"{p}: no retr_queries_split-<x>.csv in this folder")
        if len(found) > 1:
            raise InputError(f"{p}: {counted(len(found), 'split')} "
                             f"({', '.join(sorted(found))}); open one "
                             "retr_queries_split-<x>.csv file instead of the folder")
        split, queries = next(iter(found.items()))
    distractors = queries.with_name(f"retr_distractors_split-{split}.csv")
    if not distractors.is_file():
        raise InputError(f"{queries.name}: its distractor list {distractors.name} is not "
                         "beside it")
    return split, queries, distractors


def _test_sequences(folder: Path, split: str) -> set[str] | None:
    """Return the split's test sequences from a ``splits.json`` beside the lists (None when
    there is none)."""
    path = folder / "splits.json"
    if not path.is_file():
        return None
    try:
        splits = json.loads(read_text(path, "splits file"))
        return set(splits[split]["test"])
    except (json.JSONDecodeError, KeyError, TypeError) as e:
        raise InputError(f"{path.name}: has no list of test sequences for split {split} "
                         f"({type(e).__name__}: {e})") from None


def read_hpatches_tasks(path: Path, options: ReadOptions | None = None) -> Dataset:
    """Return the retrieval task of one split as a Dataset (see the module docstring)."""
    split, queries_file, distractors_file = _split_files(Path(path))
    queries = _read_list(queries_file, "query list")
    distractors = _read_list(distractors_file, "distractor list")
    for what, rows, file in (("queries", queries, queries_file),
                             ("distractors", distractors, distractors_file)):
        repeated = len(rows) - len(set(rows))
        if repeated:
            raise InputError(f"{file.name}: {counted(repeated, 'row')} repeat earlier "
                             f"{what}; each patch may be listed once")
    both = set(queries) & set(distractors)
    if both:
        what = counted(len(both), "query patch is", "query patches are")
        named = examples(f"{s}.ref.{i}" for s, i in sorted(both))
        raise InputError(f"{distractors_file.name}: {what} also distractors, e.g. {named}; "
                         "a query cannot be its own negative")
    known = _test_sequences(queries_file.parent, split)
    if known is not None:
        unknown = sorted({s for s, _ in (*queries, *distractors)} - known)
        if unknown:
            what = counted(len(unknown), "sequence is", "sequences are")
            raise InputError(f"{queries_file.name}: {what} not in split {split}'s test set "
                             f"of splits.json, e.g. {examples(unknown)}")
    gallery = [f"{s}.ref.{i}" for s, i in distractors]
    distractor_seq = np.array([s for s, _ in distractors])
    by_sequence: dict[str, np.ndarray] = {
        s: np.flatnonzero(distractor_seq == s) for s in set(distractor_seq.tolist())}
    built = []
    for s, i in queries:
        groups: dict[str, list[int]] = {}
        for noise, letter in NOISE.items():
            groups[noise] = list(range(len(gallery), len(gallery) + 5))
            gallery += [f"{s}.{letter}{n}.{i}" for n in range(1, 6)]
        groups["same_sequence"] = by_sequence.get(s, np.zeros(0, np.int64)).tolist()
        built.append(build_query(f"{s}.ref.{i}", f"{s}.ref.{i}", groups))
    notes = (f"split {split}: {counted(len(queries), 'query', 'queries')}, "
             f"{counted(len(distractors), 'distractor')} (all of them, as in the paper; "
             "eval.m's default keeps the first 2,000)",
             "scores are negative squared L2 distances of the raw descriptors, as "
             "hpatches-benchmark eval.m ranks")
    return Dataset(name=f"hpatches retrieval split {split}", format=NAME, path=Path(path),
                   gallery=tuple(gallery), queries=tuple(built),
                   groups=("easy", "hard", "tough", "same_sequence"),
                   protocols=tuple(f"hpatches-retrieval-{n}" for n in NOISE), notes=notes)


def _rows(descriptors: Descriptors, names: list[str] | tuple[str, ...],
          what: str) -> np.ndarray:
    """Return the raw float32 descriptor rows of ``names``; InputError for missing ones."""
    lookup = descriptors.lookup()
    found = [lookup.get(name_key(n)) for n in names]
    missing = [n for n, f in zip(names, found, strict=True) if f is None]
    if missing:
        raise InputError(f"{descriptors.path.name}: {counted(len(missing), what)} "
                         f"{'has' if len(missing) == 1 else 'have'} no descriptor, e.g. "
                         f"{examples(missing)}")
    located = [f for f in found if f is not None]  # every name, none missing
    out = np.empty((len(names), descriptors.dim), dtype=np.float32)
    for t, table in enumerate(descriptors.tables):
        rows = np.array([row if table_index == t else -1 for table_index, row in located])
        mine = rows >= 0
        out[mine] = np.asarray(table.vectors[rows[mine]], dtype=np.float32)
    finite = np.isfinite(out).all(axis=1)
    if not finite.all():
        bad = [names[i] for i in np.flatnonzero(~finite)]
        raise InputError(f"{descriptors.path.name}: {counted(len(bad), what)} "
                         f"{'has' if len(bad) == 1 else 'have'} NaN or infinite values, "
                         f"e.g. {examples(bad)}")
    return out


def iter_rank_tasks(dataset: Dataset, descriptors: Descriptors,
                    k: int) -> Iterator[tuple[int, int, Ranking | None]]:
    """Rank every query of a tasks dataset over its own patches and the distractors; yield
    (done, total, None) per block and finally (total, total, the Ranking)."""
    queries = _rows(descriptors, [q.name for q in dataset.queries], "query patch")
    gallery = _rows(descriptors, dataset.gallery, "gallery patch")
    own = np.stack([np.concatenate([q.group(n) for n in NOISE]) for q in dataset.queries])
    n_shared = dataset.n_gallery - own.size
    items = [np.union1d(own[i], q.group("same_sequence")) for i, q in
             enumerate(dataset.queries)]
    yield from iter_rank_in_pools(queries, gallery, own, np.arange(n_shared), items, k,
                                  f"{descriptors.path.name} (negative squared L2)")


READER = Reader(NAME, "HPatches retrieval task lists tasks/retr_queries_split-<x>.csv "
                "(easy, hard, tough)", sniff_hpatches_tasks, read_hpatches_tasks, priority=12)
