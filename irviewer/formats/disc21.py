"""DISC21 copy detection (the Image Similarity Challenge 2021): the ground truth
``public_ground_truth.csv`` and a predictions file, as facebookresearch/isc2021
``isc/io.py`` (commit fa7b177) reads them.

* **Ground truth**: ``query_id,reference_id`` per line, the header optional; an empty
  reference (``Q00001,``) says the query copies no reference. Every query the file names is
  a query of the dataset, with its copies as the positives of the ``disc21`` protocol (a
  query may copy several references, one line each); a query without a copy has none and
  is scored through the false answers it receives (microAP, :mod:`irviewer.core.copy_detection`).
* **Predictions** (``irviewer eval GT --ranking predictions.csv``): ``query_id,reference_id,
  score`` per line, the header optional, any score (higher is more similar). Scored as
  given: every pair counts, a query the ground truth does not list included (as a false
  positive, as isc2021's ``evaluate`` counts it), and a reference outside the gallery is a
  false answer shown by name. A repeated (query, reference) pair is refused, as
  ``check_duplicates`` refuses it; so is a file of more pairs than the cap
  (``--copy-pairs cap=N``, 500,000 by default), as ``compute_metrics.py`` refuses it.

**The gallery** (the references) is what a descriptor file names, or a ``--row-names``
list; without either, the references the ground truth names (a prediction's other
references are then false answers shown by name only). ``--images DIR`` finds the image
files of queries and references under DIR by file name without extension, at any depth.

A line that isc2021's reader would crash on (not two or three comma-separated fields, a
score that is not a number) is refused with its line number; so is a repeated ground-truth
pair (the evaluator would count it twice in microAP's denominator) and a score that is
not finite.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from irviewer.core.copy_detection import COPY, ranking_from_pairs
from irviewer.core.copy_pairs import PairSettings, iter_rank_copy_pairs, parse_pair_settings
from irviewer.core.dataset import Dataset, build_query
from irviewer.core.descriptors import Descriptors, name_key, name_keys
from irviewer.core.errors import InputError, counted, examples
from irviewer.core.ranking.listed import ListedRanking, PredictedPairs, placeholder
from irviewer.core.ranking.stored import DEFAULT_DEPTH
from irviewer.formats.base import Reader, ReadOptions, option, read_text
from irviewer.formats.gldv2 import NameIndex, images_by_name

NAME = "disc21"
GT_HEADER = "query_id,reference_id"
PREDICTIONS_HEADER = "query_id,reference_id,score"


def _first_line(path: Path) -> str:
    try:
        with Path(path).open("rb") as f:
            head = f.read(512)
    except OSError:
        return ""
    lines = [line.strip() for line in head.decode("utf-8-sig", "replace").splitlines()]
    return next((line for line in lines if line), "")


def _is_name(text: str) -> bool:
    return bool(text) and "," not in text and not any(c.isspace() for c in text)


def sniff_disc21(path: Path) -> bool:
    """Return True for a file starting with the header ``query_id,reference_id`` or with a
    line ``Q…,R…`` (two ids, the second possibly empty) as isc2021's ground truth."""
    p = Path(path)
    if not p.is_file():
        return False
    first = _first_line(p)
    if first == GT_HEADER:
        return True
    fields = first.split(",")
    return (len(fields) == 2 and _is_name(fields[0]) and fields[0][:1] in "Qq"
            and (not fields[1] or (_is_name(fields[1]) and fields[1][:1] in "Rr")))


def sniff_disc21_predictions(path: Path) -> bool:
    """Return True for a file starting with the header ``query_id,reference_id,score`` or
    with a line of two ids and a number."""
    p = Path(path)
    if not p.is_file():
        return False
    first = _first_line(p)
    if first == PREDICTIONS_HEADER:
        return True
    fields = first.split(",")
    if len(fields) != 3 or not (_is_name(fields[0]) and _is_name(fields[1])):
        return False
    try:
        float(fields[2])
    except ValueError:
        return False
    return not _is_number(fields[0]) and not _is_number(fields[1])


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _lines(path: Path, header: str, what: str) -> list[tuple[int, str]]:
    """Return (line number, stripped line) of every line but blank ones and the header
    (skipped wherever it is, as isc2021's readers skip it)."""
    text = read_text(path, what)
    return [(n, line.strip()) for n, line in enumerate(text.splitlines(), start=1)
            if line.strip() and line.strip() != header]


def read_disc21(path: Path, options: ReadOptions) -> Dataset:
    """Return the Dataset of a DISC21 ground-truth file (see the module); InputError with
    one sentence naming the file and line."""
    path = Path(path)
    where = path.name
    parse_pair_settings(options.copy_pairs)  # refused now, not after the ranking
    copies: dict[str, list[str]] = {}
    first_line: dict[tuple[str, str], int] = {}
    for line, text in _lines(path, GT_HEADER, "a DISC21 ground-truth file"):
        fields = text.split(",")
        if len(fields) != 2:
            raise InputError(f"{where}, line {line}: expected {GT_HEADER}, found "
                             f"{counted(len(fields), 'field')}")
        q, r = fields[0].strip(), fields[1].strip()
        if not q:
            raise InputError(f"{where}, line {line}: the query id is empty")
        listed = copies.setdefault(q, [])
        if not r:
            continue
        if (q, r) in first_line:
            raise InputError(f"{where}, line {line}: the pair {q},{r} is repeated (first on "
                             f"line {first_line[(q, r)]}); isc2021 would count it twice in "
                             "microAP's denominator")
        first_line[(q, r)] = line
        listed.append(r)
    if not copies:
        raise InputError(f"{where}: no query; a DISC21 ground truth has one line "
                         f"{GT_HEADER} per copy (the reference empty for a query without one)")
    named = list(dict.fromkeys(r for refs in copies.values() for r in refs))
    notes: list[str] = []
    if options.gallery_names is not None:
        gallery = list(options.gallery_names)
        known = set(gallery) if set(named) <= set(gallery) else set(name_keys(gallery))
        missing = [r for r in named if r not in known and name_key(r) not in known]
        if missing:
            raise InputError(f"{where}: {counted(len(missing), 'reference')} of the ground "
                             f"truth {'is' if len(missing) == 1 else 'are'} not among the "
                             f"{len(gallery):,} gallery images (the descriptor file's or the "
                             f"row-name list's), e.g. {examples(missing)}")
    else:
        gallery = sorted(named)
        notes.append(f"the references are the {len(gallery):,} the ground truth names (no "
                     "reference list was given): a prediction's other references count as "
                     "false answers, shown by name only")
    index = {n: i for i, n in enumerate(gallery)}
    if not set(named) <= index.keys():
        index = dict(zip(name_keys(gallery), range(len(gallery)), strict=True))
    queries = tuple(build_query(q, q, {COPY: [index.get(r, index.get(name_key(r), -1))
                                              for r in refs]}) for q, refs in copies.items())
    without = sum(1 for refs in copies.values() if not refs)
    notes.append(f"{counted(len(copies) - without, 'query', 'queries')} with a copy "
                 f"({len(first_line):,} ground-truth pairs), {without:,} without: microAP "
                 "counts every answer for them as a false positive")
    paths = images_by_name(options.images, (*copies, *gallery), notes)
    return Dataset(name="DISC21 copy detection", format=NAME, path=path,
                   gallery=tuple(gallery), queries=queries, groups=(COPY,),
                   protocols=("disc21",), image_paths=paths, notes=tuple(notes))


def read_disc21_predictions(path: Path, dataset: Dataset, settings: PairSettings | None = None
                            ) -> tuple[ListedRanking, tuple[str, ...]]:
    """Return (the ranking of a DISC21 predictions file on ``dataset``, notes): every pair
    as written (see the module), each query's first :data:`DEFAULT_DEPTH` stored for the
    viewer; InputError for a malformed line, a repeated pair, a score that is not a finite
    number, and more pairs than ``settings.cap`` allows."""
    path = Path(path)
    where = path.name
    if dataset.format != NAME:
        raise InputError(f"{where}: DISC21 predictions (query_id,reference_id,score) score a "
                         f"DISC21 ground truth, not {dataset.label()}")
    settings = settings or PairSettings()
    queries = NameIndex(dataset.query_names)
    gallery = NameIndex(dataset.gallery)
    rows = _lines(path, PREDICTIONS_HEADER, "a DISC21 predictions file")
    cap = settings.cap
    if cap is not None and len(rows) > cap:
        raise InputError(f"{where}: {len(rows):,} predictions, more than the {cap:,} "
                         "isc2021's compute_metrics.py accepts (its max_results); give "
                         f"{option('copy_pairs')} cap={len(rows)} to score them all")
    n = len(rows)
    q_index = np.empty(n, dtype=np.int64)
    result = np.empty(n, dtype=np.int64)
    score = np.empty(n, dtype=np.float64)
    outside_query = np.full(n, -1, dtype=np.int64)
    outside: list[str] = []
    outside_names: dict[str, int] = {}
    unknown_queries: dict[str, int] = {}
    seen: dict[tuple[str, str], int] = {}
    for i, (line, text) in enumerate(rows):
        fields = text.split(",")
        if len(fields) != 3:
            raise InputError(f"{where}, line {line}: expected {PREDICTIONS_HEADER}, found "
                             f"{counted(len(fields), 'field')}")
        qid, rid, value = fields
        try:
            s = float(value)
        except ValueError:
            raise InputError(f"{where}, line {line}: the score {value.strip()!r} is not a "
                             "number") from None
        if not math.isfinite(s):
            raise InputError(f"{where}, line {line}: the score {value.strip()!r} is not a "
                             "finite number")
        first = seen.setdefault((qid, rid), line)
        if first != line:
            raise InputError(f"{where}, line {line}: the pair {qid},{rid} is predicted again "
                             f"(first on line {first}); isc2021's evaluate refuses duplicate "
                             "predictions")
        q = queries.find(qid.strip())
        if q < 0:
            outside_query[i] = unknown_queries.setdefault(qid, len(unknown_queries))
        g = gallery.find(rid.strip())
        if g < 0:
            g = int(placeholder(outside_names.setdefault(rid, len(outside))))
            if -2 - g == len(outside):
                outside.append(rid)
        q_index[i], result[i], score[i] = q, g, s
    pairs = PredictedPairs(q_index, result, score, outside_query, tuple(unknown_queries))
    ranking = ranking_from_pairs(dataset, q_index, result, score, where, DEFAULT_DEPTH,
                                 tuple(outside), pairs)
    notes = []
    if unknown_queries:
        n_out = int((q_index < 0).sum())
        notes.append(f"{where}: {counted(n_out, 'prediction')} name{'s' if n_out == 1 else ''} "
                     f"{counted(len(unknown_queries), 'query', 'queries')} the ground truth "
                     f"does not list, e.g. {examples(list(unknown_queries))}: false "
                     "positives in microAP, as isc2021's evaluate counts them")
    if outside:
        notes.append(f"{where}: {counted(len(outside), 'predicted reference')} "
                     f"{'is' if len(outside) == 1 else 'are'} not in the gallery, e.g. "
                     f"{examples(outside)}: false answers, shown by name")
    if not n:
        notes.append(f"{where}: no prediction; microAP is 0")
    return ranking, tuple(notes)


READER = Reader(NAME, "a DISC21 copy-detection ground truth (query_id,reference_id)",
                sniff_disc21, read_disc21, priority=14,
                takes=frozenset({"images", "copy_pairs"}))



def iter_rank_disc21(descriptors: Descriptors, dataset: Dataset, depth: int,
                     spec: str | None) -> Iterator[tuple[int, int, ListedRanking | None]]:
    """Yield (done, total, None) per block while making ``dataset``'s pairs from
    ``descriptors`` as isc2021's descriptor track makes them under the ``--copy-pairs``
    settings ``spec``, then (total, total, the ranking)
    (:func:`irviewer.core.copy_pairs.iter_rank_copy_pairs`)."""
    settings = parse_pair_settings(spec)
    total = 1
    for step in iter_rank_copy_pairs(descriptors, dataset, depth, settings):
        if isinstance(step, ListedRanking):
            yield total, total, step
        else:
            total = max(step.total, 1)
            yield step.done, total, None
