"""A re-ranking chain applied to one descriptor file's vectors, giving a :class:`Ranking`.

The steps of a :class:`~irviewer.core.rerank.spec.Chain` run left to right on the unit
vectors: ``dba`` replaces the gallery vectors, ``aqe`` the query vectors, and the result is
ranked by cosine like any descriptor file (:func:`irviewer.core.ranking.iter_rank`); a
final ``k-reciprocal`` turns the current vectors into distances, whose negated rows are
ranked block by block (:func:`irviewer.core.ranking.iter_rank_rows`). Either way the
result is a :class:`~irviewer.core.ranking.Ranking` like every other method's: top-K lists
and exact ranks of every positive and junk item, so every protocol and metric applies
unchanged. The protocol's removals (junk, same camera, the query's own image) happen after
re-ranking, when the ranking is scored, as the benchmarks' evaluators do; the gallery
images the dataset removes for every query (Market-1501's id -1, ignored labels) take no
part, as when torchreid drops them on reading the folder.

Gallery x gallery work (DBA's neighbours, k-reciprocal's (queries + gallery)^2 neighbour
search) is estimated from the sizes before anything runs and refused above
:data:`BUDGET_MULTIPLY_ADDS`.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import replace

import numpy as np

from irviewer.core.dataset import Dataset
from irviewer.core.descriptors import AlignedDescriptors, row_norms
from irviewer.core.errors import InputError
from irviewer.core.ranking import DEFAULT_DEPTH, Ranking, iter_rank, iter_rank_rows
from irviewer.core.rerank.expansion import expand_queries, iter_dba
from irviewer.core.rerank.search import Top
from irviewer.core.rerank.spec import WHERE, Chain, Step

#: The largest neighbour search a chain may start, in multiply-adds: 2e13 is about
#: 10 minutes at the 35 billion a second two cores reach (docs/performance.md); MSMT17's
#: k-reciprocal search (93,820 images, 2048-d) is 9e12.
BUDGET_MULTIPLY_ADDS = 2e13
#: Gallery rows normalised at once.
_ROWS = 8192

#: What :func:`iter_rerank` yields: (stage, done, total); it returns the Ranking.
Reranking = Generator[tuple[str, int, int], None, Ranking]


def search_cost(chain: Chain, n_queries: int, n_gallery: int, dim: int) -> float:
    """Return the multiply-adds of the chain's all-pairs neighbour searches: n (n + 1) / 2
    x dim for DBA over the gallery, and for k-reciprocal over queries and gallery."""
    cost = 0.0
    for step in chain.steps:
        if step.method == "dba" and step["k"] > 0:
            cost += n_gallery * (n_gallery + 1) / 2 * dim
        elif step.method == "k-reciprocal":
            n = n_queries + n_gallery
            cost += n * (n + 1) / 2 * dim
    return cost


def check_budget(chain: Chain, n_queries: int, n_gallery: int, dim: int) -> None:
    """Return None when the chain's neighbour searches fit :data:`BUDGET_MULTIPLY_ADDS`;
    InputError saying the estimate otherwise."""
    cost = search_cost(chain, n_queries, n_gallery, dim)
    if cost > BUDGET_MULTIPLY_ADDS:
        raise InputError(
            f"{WHERE}: {chain.label()} on {n_queries:,} queries and {n_gallery:,} gallery "
            f"images of {dim} dimensions needs an all-pairs neighbour search of about "
            f"{cost:.1e} multiply-adds, over the budget of {BUDGET_MULTIPLY_ADDS:.0e} (about "
            "10 minutes on two cores); re-rank a smaller gallery, or use aqe alone")


def unit_gallery(aligned: AlignedDescriptors, rows: np.ndarray,
                 out: np.ndarray | None = None) -> np.ndarray:
    """Return the L2-normalised float32 vectors of dataset gallery images ``rows``, read
    block by block (a memory-mapped file is never converted whole), written into ``out``
    when given."""
    if out is None:
        out = np.empty((len(rows), aligned.dim), dtype=np.float32)
    norms = aligned.gallery_norms
    for a in range(0, len(rows), _ROWS):
        idx = rows[a:a + _ROWS]
        file_rows = idx if aligned.gallery_rows is None else aligned.gallery_rows[idx]
        block = np.asarray(aligned.gallery[file_rows], dtype=np.float32)
        n = row_norms(block) if norms is None else norms[idx]
        out[a:a + _ROWS] = block / n[:, None]
    return out


def iter_rerank(chain: Chain, aligned: AlignedDescriptors, dataset: Dataset, k: int = DEFAULT_DEPTH,
                plain: Ranking | None = None) -> Reranking:
    """Re-rank the gallery for every query by ``chain``, yielding (stage, done, total);
    return the :class:`Ranking` (``source`` the file's name, ``rerank`` the chain's label).

    ``plain``, the cosine ranking of the same vectors when already made, gives a first
    ``aqe`` its neighbours (when its lists are deep enough) instead of a search. InputError
    when the chain's neighbour searches exceed the budget (:func:`check_budget`).
    """
    active = np.flatnonzero(~dataset.ignored_mask)
    check_budget(chain, dataset.n_queries, len(active), aligned.dim)
    label = chain.label()
    source = aligned.path.name if aligned.path is not None else "descriptors"
    queries = aligned.queries
    yield "reading the gallery", 0, 1
    if chain.steps[0].method == "k-reciprocal":  # queries and gallery in one array at once
        joined = np.empty((len(queries) + len(active), aligned.dim), dtype=np.float32)
        joined[:len(queries)] = queries
        unit_gallery(aligned, active, out=joined[len(queries):])
        return (yield from _iter_kreciprocal(chain.steps[0], joined, len(queries), active,
                                             dataset, k, source, label))
    gallery = unit_gallery(aligned, active)  # the active gallery images, in dataset order
    changed = False
    for step in chain.steps:
        if step.method == "dba":
            gallery = yield from _staged(f"dba neighbours ({step.label()})",
                                         iter_dba(gallery, step.whole("k"), step["alpha"]))
            changed = True
        elif step.method == "aqe":
            n = step.whole("n")
            top = None
            if not changed and plain is not None and 0 < n <= plain.k:
                top = _plain_top(plain, active, n)
            yield f"query expansion ({step.label()})", 0, 1
            queries = expand_queries(queries, gallery, n, step["alpha"], top)
            changed = True
        else:
            joined = np.concatenate([queries, gallery])
            del gallery, queries  # the joined copy is all k-reciprocal needs
            return (yield from _iter_kreciprocal(step, joined, dataset.n_queries, active,
                                                 dataset, k, source, label))
    vectors = _full_gallery(aligned, gallery, active, dataset.n_gallery)
    final = AlignedDescriptors(queries=queries, gallery=vectors, gallery_rows=None,
                               dim=aligned.dim, path=aligned.path,
                               gallery_names=dataset.gallery,
                               gallery_norms=np.ones(len(vectors), dtype=np.float32))
    ranking = None
    for progress in iter_rank(final, dataset, k=k):
        yield "ranking", progress.done, progress.total
        ranking = progress.ranking or ranking
    assert ranking is not None
    return replace(ranking, source=source, rerank=label)


def _staged(stage: str, work: Generator[tuple[int, int], None, np.ndarray]
            ) -> Generator[tuple[str, int, int], None, np.ndarray]:
    """Run ``work``, yielding its (done, total) under the name ``stage``; return its result."""
    while True:
        try:
            done, total = next(work)
        except StopIteration as finished:
            return finished.value
        yield stage, done, total


def _plain_top(plain: Ranking, active: np.ndarray, n: int) -> Top:
    """Return the plain ranking's first ``n`` of every query as a :class:`Top` over the
    active gallery's positions (its lists hold only active images)."""
    position = np.full(len(plain.ignored_mask) if plain.ignored_mask is not None
                       else int(active.max(initial=-1)) + 1, -1, dtype=np.int64)
    position[active] = np.arange(len(active))
    idx = plain.top_indices[:, :n]
    return Top(np.where(idx >= 0, position[np.maximum(idx, 0)], -1), plain.top_scores[:, :n])


def _full_gallery(aligned: AlignedDescriptors, gallery: np.ndarray, active: np.ndarray,
                  n_gallery: int) -> np.ndarray:
    """Return the unit vectors of every gallery image in dataset order: the chain's for the
    active images, the file's own (normalised) for those removed for every query (never
    ranked, but a ranking's rows cover the whole gallery)."""
    if len(active) == n_gallery:
        return gallery
    out = np.empty((n_gallery, aligned.dim), dtype=np.float32)
    out[active] = gallery
    removed = np.setdiff1d(np.arange(n_gallery), active)
    out[removed] = unit_gallery(aligned, removed)
    return out


def _iter_kreciprocal(step: Step, joined: np.ndarray, n_q: int,
                      active: np.ndarray, dataset: Dataset, k: int, source: str,
                      label: str) -> Reranking:
    """Return the ranking by k-reciprocal final distances (negated) of the unit rows
    ``joined`` (the ``n_q`` queries, then the active gallery), built block by block."""
    # Imported here: it needs scipy.sparse (0.1 s to import), which a plain ranking, and so
    # every `irviewer eval` without --rerank, never loads.
    from irviewer.core.rerank.kreciprocal import iter_encode_joined

    encoding = yield from iter_encode_joined(joined, n_q, step.whole("k1"), step.whole("k2"),
                                             step["lambda"])
    n_g = dataset.n_gallery

    def score_rows(qa: int, qb: int) -> np.ndarray:
        distances = encoding.distance_rows(qa, qb)
        if len(active) == n_g:
            return np.negative(distances, out=distances)
        out = np.full((qb - qa, n_g), -np.inf, dtype=np.float32)
        out[:, active] = -distances
        return out

    def row_scores(q: int) -> np.ndarray:
        return score_rows(q, q + 1)[0]

    ranking = None
    for progress in iter_rank_rows(dataset, score_rows, k, source=source, rerank=label,
                                   row_scores=row_scores):
        yield "ranking", progress.done, progress.total
        ranking = progress.ranking or ranking
    assert ranking is not None
    return ranking

