"""TREC exports: a run and qrels with which trec_eval or ranx reproduce irviewer's AP.

trec_eval cannot ignore documents, so the run leaves out, per query, every item the protocol
removes (junk, same camera, the query itself when the self-match is removed) — exactly what
irviewer does before counting ranks. Each list goes at least down to the query's last
retrieved positive (from the query's full score row when the stored top-K is shorter), so
trec_eval's ``map`` equals irviewer's finite-sum mAP. The score column is written as a
strictly decreasing number derived from the rank (``depth - rank``): trec_eval re-sorts by
score and breaks ties by docid, which would otherwise reorder equal cosines. Queries the
protocol skips (no positive) are left out of the qrels, so trec_eval does not score them 0.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from irviewer.core.atomic import atomic_open
from irviewer.core.evaluation import Evaluation, query_roles


def ranked_list(evaluation: Evaluation, q: int, depth: int | None = None) -> np.ndarray:
    """Return query ``q``'s ranked gallery indices with the protocol's removals taken out,
    at least down to its last retrieved positive (and to ``depth`` when given)."""
    ev = evaluation
    ds, ranking = ev.dataset, ev.ranking
    mask = np.zeros(ds.n_gallery, dtype=bool)
    mask[ds.global_ignored] = True
    _, ign = query_roles(ds.queries[q], ev.protocol, mask)
    drop = mask.copy()
    drop[ign] = True
    ranks = ev.positives.of(q)
    need = max(depth or ranking.k, int(ranks[-1]) + 1 if len(ranks) else 0)
    top = ranking.top_indices[q]
    top = top[top >= 0]
    kept = top[~drop[top]]
    if len(kept) >= need or ranking.truncated:
        return kept[:need]
    row = ranking.score_row(q)
    order = np.argsort(-row, kind="stable")
    order = order[np.isfinite(row[order]) & ~drop[order]]
    return order[:need]


def write_trec_run(path: Path, evaluation: Evaluation, depth: int | None = None,
                   tag: str = "irviewer") -> None:
    """Write the evaluation's ranking as a TREC run (``qid Q0 docid rank score tag``)."""
    ds = evaluation.dataset
    with atomic_open(Path(path)) as out:
        for q, query in enumerate(ds.queries):
            if evaluation.positives.n_positives[q] == 0:
                continue
            listed = ranked_list(evaluation, q, depth)
            n = len(listed)
            for r, g in enumerate(listed):
                out.write(f"{query.name} Q0 {ds.gallery[g]} {r + 1} {n - r} {tag}\n")


def write_qrels(path: Path, evaluation: Evaluation) -> None:
    """Write the protocol's positives as TREC qrels (``qid 0 docid 1``)."""
    ds = evaluation.dataset
    mask = np.zeros(ds.n_gallery, dtype=bool)
    mask[ds.global_ignored] = True
    with atomic_open(Path(path)) as out:
        for query in ds.queries:
            pos, _ = query_roles(query, evaluation.protocol, mask)
            for g in pos:
                out.write(f"{query.name} 0 {ds.gallery[g]} 1\n")
