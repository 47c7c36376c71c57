"""TREC exports: a run and qrels with which trec_eval or ranx reproduce irviewer's finite AP.

``write_trec_run`` and ``write_qrels`` write one evaluation (one protocol) in the formats of
trec_eval (NIST, https://github.com/usnistgov/trec_eval): run lines
``qid Q0 docid rank score tag`` and qrels lines ``qid 0 docid relevance``. Query ids are
query names, document ids gallery names. ``trec_eval -m map QRELS RUN`` (or ranx's
``evaluate(qrels, run, "map")``) then gives exactly irviewer's mAP under the *finite-sum*
rule (mean over positives of P@rank; ``--ap finite``). Under a trapezoid protocol (Oxford,
revisited, Holidays) the files still hold that protocol's positives and removals, but the
AP they give is the finite-sum one; the writer's notes say so.

How the files make that exact:

* **Removed items are left out of the run.** trec_eval cannot ignore a document: an item
  absent from the qrels counts as non-relevant. So, per query, the run leaves out every
  item the protocol removes before counting ranks — its ignored groups (junk, same camera),
  the query's own image when the protocol removes the self-match, and images removed for
  every query — exactly as :func:`irviewer.core.evaluation.protocol_ranks` does.
* **Deep enough.** Each list goes down to ``depth`` (default: the stored top-K) and in any
  case to the query's last retrieved positive, so every positive irviewer counts is in the
  run. When the stored top-K is too short the list comes from the query's full score row,
  made again and ordered as the ranking orders (:meth:`~irviewer.core.ranking.Ranking.ranked`:
  descending score, near ties by exact score, equal ones in gallery order). A truncated
  precomputed ranking is written as far as it is known. A protocol with a list depth
  (HPatches: 50) is cut there.
* **No reordering by trec_eval.** trec_eval ignores the rank column and sorts by score,
  ties broken by docid descending (``comp_sim_docno`` in ``form_res_rels.c``). A query's
  real scores are written (``%.9g``, which keeps float32 values distinct) when they strictly
  decrease down its list; otherwise — equal scores, or a list without scores — its whole
  score column is ``n, n-1, ..., 1`` for a list of ``n`` (the rank, turned into a strictly
  decreasing number). Either way score order = rank order, and ties cannot reorder a list.
* **The qrels list the protocol's positives** with relevance 1, every positive, retrieved or
  not (trec_eval divides by all of them, as irviewer does). Under a protocol whose AP divides
  by the positives within the list only (HPatches, ``ap_positives="retrieved"``), positives
  beyond the list get relevance 0, so the query stays in the qrels (scored 0 when none is
  retrieved, as irviewer does).
* **Skipped queries are left out** of both files: a query with no positive after the
  protocol's removals is left out of irviewer's means, while trec_eval would score it 0.
* A query that is evaluated but whose list is empty (a precomputed ranking that retrieved
  nothing for it) has no run line; trec_eval then skips it unless given ``-c`` (ranx:
  ``make_comparable=True``). The writer's notes say when this happens.

Both files are written atomically (a temporary file, then ``os.replace``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from irviewer.core.convention_names import FINITE
from irviewer.core.errors import InputError, Sentence, either, examples
from irviewer.core.evaluation import Evaluation, query_roles, remove_ignored
from irviewer.core.ranking import Ranking
from irviewer.io.atomic import atomic_open

_SPACE = re.compile(r"\s")


def exported_list(evaluation: Evaluation, q: int,
                  depth: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Return (gallery indices, scores) of query ``q``'s list as the run writes it.

    The ranked gallery with the protocol's removed items taken out, down to ``depth``
    (default: the stored top-K depth) and at least to the last retrieved positive, cut at
    the protocol's list depth (:meth:`~irviewer.core.ranking.Ranking.ranked`: the stored
    list, or the score row made again and ordered as the ranking orders); scores are
    float32 (nan where a precomputed ranking has none). Positives sit exactly at the ranks
    the evaluation counted (checked: should a score row made elsewhere order differently
    from its ranking, the positives are put at their counted ranks, each image keeping its
    score).
    """
    ev = evaluation
    ds, ranking, protocol = ev.dataset, ev.ranking, ev.protocol
    global_mask = ds.ignored_mask
    pos, ign = query_roles(ds.queries[q], protocol, global_mask)
    drop = global_mask.copy()
    drop[ign] = True
    counted = ev.positives.of(q)
    need = max(ranking.k if depth is None else depth, int(counted[-1]) + 1 if len(counted) else 0)
    if protocol.list_depth is not None:
        need = min(need, protocol.list_depth)
    listed, scores = ranking.ranked(q, need, drop)
    scores = scores.astype(np.float32)
    is_pos = np.isin(listed, pos)
    if not np.array_equal(np.flatnonzero(is_pos), counted):
        score_of = dict(zip(listed.tolist(), scores.tolist(), strict=True))
        listed = _place_positives(ev, q, pos, ign, listed[~is_pos], len(listed))
        known = _scores_of(ranking, q, listed)
        scores = np.array([score_of.get(g, s) for g, s in zip(listed.tolist(), known.tolist(),
                                                               strict=True)], dtype=np.float32)
    return listed, scores


def _scores_of(ranking: Ranking, q: int, gallery: np.ndarray) -> np.ndarray:
    """Return query ``q``'s scores of the images ``gallery``: the ranking's stored ones, else
    from its score row (nan where neither knows)."""
    idx, _, stored = ranking.items(q)
    out = np.full(len(gallery), np.nan, dtype=np.float32)
    at = np.searchsorted(idx, gallery)
    found = (at < len(idx)) & (idx[np.minimum(at, max(len(idx) - 1, 0))] == gallery) \
        if len(idx) else np.zeros(len(gallery), dtype=bool)
    out[found] = stored[at[found]]
    if (~found).any() and ranking.has_score_rows:
        out[~found] = ranking.score_row(q)[gallery[~found]]
    return out


def _place_positives(ev: Evaluation, q: int, pos: np.ndarray, ign: np.ndarray,
                     negatives: np.ndarray, length: int) -> np.ndarray:
    """Return a list of ``length`` with each retrieved positive at its counted rank and the
    negatives, in order, in the other places."""
    adjusted = remove_ignored(ev.ranking.rank_items(q, pos), ev.ranking.rank_items(q, ign))
    got = (adjusted >= 0) & (adjusted < length)
    out = np.full(length, -1, dtype=np.int64)
    out[adjusted[got]] = pos[got]
    free = np.flatnonzero(out < 0)
    n = min(len(free), len(negatives))
    out[free[:n]] = negatives[:n]
    return out[out >= 0]


def trec_scores(scores: np.ndarray) -> list[str]:
    """Return the score column for one list: the real scores (``%.9g``) when they are finite
    and strictly decreasing, else ``n, n-1, ..., 1``; both sort exactly like the ranks."""
    if _strictly_decreasing(scores):
        return [f"{float(v):.9g}" for v in np.asarray(scores, dtype=np.float32)]
    return [str(len(scores) - r) for r in range(len(scores))]


def write_trec_run(path: Path, evaluation: Evaluation, depth: int | None = None,
                   tag: str = "irviewer",
                   queries: Sequence[int] | None = None) -> tuple[str, ...]:
    """Write the evaluation's ranking as a TREC run; return notes for the user.

    One line ``qid Q0 docid rank score tag`` per listed item of each evaluated query (of
    ``queries`` only, when given: the window's one query; see the module docstring for what
    is listed and why). ``depth`` is a minimum list length after removals; lists always
    reach the last retrieved positive. InputError when a name or the tag contains white
    space (a TREC file cannot hold it) or the file cannot be written.
    """
    path = Path(path)
    ev = evaluation
    ds = ev.dataset
    if depth is not None and depth < 1:
        raise InputError(f"{path.name}: the run depth must be at least 1, not {depth}")
    if not tag or _SPACE.search(tag):
        raise InputError(f"{path.name}: the run tag {tag!r} must be one word")
    _check_names(path, ev)
    empty: list[str] = []
    tied = 0
    with atomic_open(path) as out:
        for q, listed, scores in _lists(ev, depth, queries):
            qname = ds.queries[q].name
            if not len(listed):
                empty.append(qname)
                continue
            column = trec_scores(scores)
            tied += not _strictly_decreasing(scores)
            out.writelines(f"{qname} Q0 {ds.gallery[g]} {r} {s} {tag}\n"
                           for r, (g, s) in enumerate(zip(listed, column, strict=True),
                                                      start=1))
    notes: list[str] = []
    if ev.protocol.ap != FINITE:
        notes.append(Sentence(f"{path.name}: trec_eval's map is the finite-sum AP; irviewer's "
                              f"mAP under {ev.protocol.name} is {ev.protocol.ap}: compare with "
                              f"{either('--ap finite', 'the finite-sum AP rule', 'ap')}"))
    if tied:
        notes.append(f"{path.name}: {tied} lists have equal or missing scores; their score "
                     "column is n, n-1, ..., 1 so that trec_eval keeps irviewer's order")
    if empty:
        notes.append(f"{path.name}: {len(empty)} evaluated queries retrieved nothing and have "
                     f"no line, e.g. {examples(empty)}; give trec_eval -c (ranx: "
                     "make_comparable=True) so they count as 0, as irviewer does")
    return tuple(notes)


def write_qrels(path: Path, evaluation: Evaluation,
                queries: Sequence[int] | None = None) -> None:
    """Write the protocol's positives as TREC qrels (``qid 0 docid 1``), per evaluated query
    (of ``queries`` only, when given).

    Under a protocol whose AP divides by the positives within its list only
    (``ap_positives="retrieved"``), positives beyond the list are written with relevance 0.
    InputError when a name contains white space or the file cannot be written.
    """
    path = Path(path)
    ev = evaluation
    ds = ev.dataset
    _check_names(path, ev)
    global_mask = ds.ignored_mask
    within_list = ev.protocol.ap_positives == "retrieved"
    with atomic_open(path) as out:
        for q in evaluated_queries(ev, queries):
            query = ds.queries[q]
            pos, _ = query_roles(query, ev.protocol, global_mask)
            relevant = np.ones(len(pos), dtype=bool)
            if within_list:
                listed, _ = exported_list(ev, q)
                relevant = np.isin(pos, listed)
            out.writelines(f"{query.name} 0 {ds.gallery[g]} {int(r)}\n"
                           for g, r in zip(pos, relevant, strict=True))


def evaluated_queries(ev: Evaluation, queries: Sequence[int] | None = None) -> list[int]:
    """Return the evaluated queries (with a positive) among ``queries`` (default: every
    query), in order: the queries the exported files hold."""
    chosen = range(ev.dataset.n_queries) if queries is None else queries
    return [int(q) for q in chosen if ev.positives.n_positives[q] > 0]


def _lists(ev: Evaluation, depth: int | None,
           queries: Sequence[int] | None = None) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    for q in evaluated_queries(ev, queries):
        listed, scores = exported_list(ev, q, depth)
        yield q, listed, scores


def _strictly_decreasing(scores: np.ndarray) -> bool:
    s = np.asarray(scores, dtype=np.float32)
    return bool(np.all(np.isfinite(s)) and np.all(np.diff(s) < 0))


def _check_names(path: Path, ev: Evaluation) -> None:
    """InputError when a query or gallery name cannot be a TREC field (white space, empty)."""
    ds = ev.dataset
    for kind, names in (("query", [q.name for q in ds.queries]), ("gallery", ds.gallery)):
        bad = [n for n in names if not n or _SPACE.search(n)]
        if bad:
            raise InputError(f"{path.name}: {len(bad)} {kind} names contain white space, which "
                             f"a TREC file cannot hold, e.g. {examples(repr(n) for n in bad)}")
