"""Copy detection scored over predicted pairs, as the Image Similarity Challenge scores it.

DISC21 (Douze et al., "The 2021 Image Similarity Dataset and Challenge", arXiv 2106.09672)
asks, for every query, which references it copies; most queries copy none. Its evaluator,
``evaluate`` in facebookresearch/isc2021 ``isc/metrics.py`` (commit e12efd5), scores the
*set of predicted (query, reference, score) pairs* as one list, not query by query:

- **microAP**: the pairs sorted by descending score, equal scores with the false ones first
  (the worst order: "It prevents participants from putting the same score for all
  predictions to get a good AP"); precision and recall after each pair, recall over every
  ground-truth pair (``num_positives = len(gt_matches)``, so a true pair never predicted
  still counts); AP = Σ (recallᵢ − recallᵢ₋₁) · precisionᵢ. One global number: a false
  answer for a query without a copy costs as much as one for a query with one.
- **recall at precision 90 %** (``find_operating_point``): among the points of that list
  whose precision is at least 0.9, the highest recall, and the score at the first such
  point (the threshold: accept pairs scoring at least it); none when precision never reaches
  0.9.
- **recall at rank 1 and 10** (``find_tp_ranks``): each ground-truth pair's rank is the
  number of its query's predictions scoring at least as high, minus one (ties count against
  it); recall@rank k = ground-truth pairs of rank < k over every ground-truth pair.

A duplicate (query, reference) pair is refused, as ``check_duplicates`` refuses it; the
readers say so in one sentence. Predictions naming a query the ground truth does not list
are false positives, as the evaluator counts them.

Pairs from descriptors are made as the challenge's descriptor track makes them
(``scripts/compute_metrics.py`` ``compute_metrics_track2`` with ``isc/descriptor_matching.py``,
commit 3b7e839): the raw vectors (not normalised), at most 256 dimensions (``--max_dim``),
scored by the negated squared L2 distance (``faiss.METRIC_L2``; ``--ip``: the inner
product), and either the 500,000 best pairs over all queries together (``--max_results``,
``match_and_make_predictions``: a range search capped at that many results) or each query's
k nearest references (``--knn k``, ``knn_match_and_make_predictions``, no global cap).
:func:`iter_pairs` streams the gallery in chunks and keeps only the pairs that can still be
among the best, so memory stays bounded by the cap (or k per query), not by queries ×
references.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from itertools import pairwise
from typing import Literal

import numpy as np

from irviewer.core.dataset import Dataset
from irviewer.core.descriptors import AlignedDescriptors, Descriptors, align, name_key
from irviewer.core.errors import InputError, either
from irviewer.core.parallel import row_parts, run_parts
from irviewer.core.ranking.gallery import PARALLEL_SCORES, chunk_rows, chunks, gallery_chunk
from irviewer.core.ranking.listed import (
    ListedRanking,
    PredictedPairs,
    ranking_from_positions,
)
from irviewer.core.ranking.stored import Ranking

#: The protocol family scored over predicted pairs.
COPY_DETECTION = "copy-detection"
#: The relevance group of a query's copies.
COPY = "copy"
#: Per-query keys that describe a query's answers (defined for every query).
ANSWER_KEYS = ("n_answers", "top_score")
#: isc2021's defaults: ``--max_results``, ``--max_dim``.
MAX_RESULTS, MAX_DIM = 500_000, 256
#: The required precision of ``find_operating_point``.
PRECISION_TARGET = 0.9
#: Scores computed per block at most (float32: 64 MB).
BLOCK_SCORES = 16 * 2**20
#: How the pair settings are named in messages, by each edge (the command line, the window).
PAIRS_OPTION = either("--copy-pairs", "\u201cCopy-detection pairs\u201d in the Open dialog",
                      "copy_pairs")


@dataclass(frozen=True)
class PairSettings:
    """How pairs are made from descriptors (isc2021's descriptor track, see the module).

    ``cap``: the best pairs over all queries (``--max_results``), None in k-nearest mode;
    it also bounds a predictions file, as ``compute_metrics`` refuses more.
    ``knn``: each query's k nearest references (``--knn``), None for the global cap.
    ``metric``: ``l2`` (negated squared L2) or ``ip`` (inner product, ``--ip``).
    ``max_dim``: descriptors of more dimensions are refused (``--max_dim``).
    """

    cap: int | None = MAX_RESULTS
    knn: int | None = None
    metric: Literal["l2", "ip"] = "l2"
    max_dim: int = MAX_DIM

    @property
    def text(self) -> str:
        """Return the settings as the SPEC that gives them back (``cap=500000,metric=l2``)."""
        first = f"knn={self.knn}" if self.knn is not None else f"cap={self.cap}"
        return f"{first},metric={self.metric},max_dim={self.max_dim}"

    def describe(self) -> str:
        """Return the settings in words, naming isc2021's arguments."""
        score = ("negated squared L2 distance of the raw vectors (faiss METRIC_L2)"
                 if self.metric == "l2" else "inner product of the raw vectors (its ip)")
        kept = (f"each query's {self.knn} nearest references (its knn={self.knn}, no global "
                "cap)" if self.knn is not None else
                f"the {self.cap:,} best pairs over all queries together (its max_results)")
        return (f"isc2021 descriptor track: {kept}; score = {score}; at most "
                f"{self.max_dim} dimensions (its max_dim)")


_SPEC_KEYS = {"cap", "knn", "metric", "max_dim"}


def parse_pair_settings(spec: str | None) -> PairSettings:
    """Return the :class:`PairSettings` of ``spec`` (comma-separated ``cap=N``, ``knn=K``,
    ``metric=l2|ip``, ``max_dim=D``; None or "" for isc2021's defaults); InputError naming
    the option for anything else."""
    if not spec or not spec.strip():
        return PairSettings()
    values: dict[str, str] = {}
    for part in spec.split(","):
        key, eq, value = part.strip().partition("=")
        if not eq or key not in _SPEC_KEYS or not value:
            raise InputError(f"{PAIRS_OPTION} {spec}: {part.strip()!r} is not a setting; use "
                             "cap=N, knn=K, metric=l2 or metric=ip, max_dim=D, separated by "
                             "commas")
        values[key] = value.strip()
    numbers = {k: _whole(spec, k, v) for k, v in values.items() if k != "metric"}
    if "cap" in numbers and "knn" in numbers:
        raise InputError(f"{PAIRS_OPTION} {spec}: give cap (the best pairs over all queries) "
                         "or knn (each query's nearest), not both")
    metric = values.get("metric", "l2")
    if metric not in ("l2", "ip"):
        raise InputError(f"{PAIRS_OPTION} {spec}: metric is l2 or ip, not {metric!r}")
    knn = numbers.get("knn")
    return PairSettings(cap=None if knn is not None else numbers.get("cap", MAX_RESULTS),
                        knn=knn, metric="ip" if metric == "ip" else "l2",
                        max_dim=numbers.get("max_dim", MAX_DIM))


def _whole(spec: str, key: str, value: str) -> int:
    if not re.fullmatch(r"[0-9_]+", value) or int(value.replace("_", "")) < 1:
        raise InputError(f"{PAIRS_OPTION} {spec}: {key} must be a whole number of at least "
                         f"1, not {value!r}")
    return int(value.replace("_", ""))


# -- the metrics ---------------------------------------------------------------------------

@dataclass(frozen=True)
class MicroResult:
    """isc2021's ``Metrics`` of one set of predicted pairs (see the module).

    ``precisions``, ``recalls``, ``thresholds``: after each pair of the worst-order list;
    ``average_precision``: microAP (nan without ground truth); ``recall_at_p90`` and
    ``threshold_at_p90``: None when precision never reaches 0.9; ``rank1``, ``rank10``:
    recall at rank 1 and 10; ``tp_ranks``: each ground-truth pair's rank (-1: not
    predicted)."""

    average_precision: float
    precisions: np.ndarray
    recalls: np.ndarray
    thresholds: np.ndarray
    recall_at_p90: float | None
    precision_at_p90: float | None
    threshold_at_p90: float | None
    rank1: float
    rank10: float
    tp_ranks: np.ndarray
    n_ground_truth: int


def micro_metrics(query: np.ndarray, result: np.ndarray, score: np.ndarray,
                  truth_query: np.ndarray, truth_result: np.ndarray) -> MicroResult:
    """Return isc2021's metrics of the predicted pairs (``query``, ``result``, ``score``;
    -1 marks a query the ground truth does not know) against the ground-truth pairs
    (``truth_query``, ``truth_result``), as ``evaluate`` computes them (see the module).
    The pairs must be distinct (the readers refuse duplicates)."""
    query = np.asarray(query, dtype=np.int64)
    result = np.asarray(result, dtype=np.int64)
    score = np.asarray(score, dtype=np.float64)
    truth_query = np.asarray(truth_query, dtype=np.int64)
    truth_result = np.asarray(truth_result, dtype=np.int64)
    n_gt = len(truth_query)
    bound = int(max(result.max(initial=0), truth_result.max(initial=0))) + 1
    # One int64 key per (query, result); placeholders (< -1) and unknown queries never match.
    gt_keys = np.sort(truth_query * bound + truth_result)
    keys = query * bound + np.maximum(result, 0)
    at = np.minimum(np.searchsorted(gt_keys, keys), max(len(gt_keys) - 1, 0))
    true = (query >= 0) & (result >= 0) & (gt_keys[at] == keys) if n_gt else \
        np.zeros(len(keys), dtype=bool)
    # Worst order: descending score, the false pairs of equal score first.
    order = np.lexsort((true, -score))
    is_true = true[order]
    ntp = np.cumsum(is_true)
    with np.errstate(invalid="ignore", divide="ignore"):
        precisions = ntp / np.arange(1, len(order) + 1)
        recalls = ntp / n_gt if n_gt else np.full(len(order), np.nan)
    thresholds = score[order]
    if n_gt:
        ap = float(((recalls - np.concatenate([[0.0], recalls[:-1]])) * precisions).sum())
    else:
        ap = float("nan")
    valid = precisions >= PRECISION_TARGET
    rp90 = pp90 = tp90 = None
    if valid.any() and n_gt:
        best = int(np.argmax(recalls[valid]))
        rp90 = float(recalls[valid][best])
        pp90 = float(precisions[valid][best])
        tp90 = float(thresholds[valid][best])
    ranks = _tp_ranks(query, result, score, truth_query, truth_result, bound)
    rank1 = float((ranks == 0).sum() / n_gt) if n_gt else float("nan")
    rank10 = float(((ranks >= 0) & (ranks < 10)).sum() / n_gt) if n_gt else float("nan")
    return MicroResult(ap, precisions, recalls, thresholds, rp90, pp90, tp90, rank1, rank10,
                       ranks, n_gt)


def _tp_ranks(query: np.ndarray, result: np.ndarray, score: np.ndarray,
              truth_query: np.ndarray, truth_result: np.ndarray, bound: int) -> np.ndarray:
    """Return each ground-truth pair's rank among its query's predictions (the number
    scoring at least as high, minus one: ties count against it); -1 when not predicted."""
    known = query >= 0
    q, r, s = query[known], result[known], score[known]
    order = np.lexsort((-s, q))  # by query, then descending score
    q, r, s = q[order], r[order], s[order]
    starts = np.searchsorted(q, truth_query, side="left")
    keys = q * bound + np.maximum(r, 0)
    where = {int(k): i for i, k in enumerate(keys[r >= 0].tolist())} if len(q) else {}
    real = np.flatnonzero(r >= 0)
    out = np.full(len(truth_query), -1, dtype=np.int64)
    for i, (tq, tr) in enumerate(zip(truth_query.tolist(), truth_result.tolist(),
                                     strict=True)):
        j = where.get(tq * bound + tr)
        if j is None:
            continue
        at = int(real[j])
        start = int(starts[i])
        # The query's predictions are q[start:...] in descending score; count >= s[at].
        end = int(np.searchsorted(q, tq, side="right"))
        out[i] = int(np.searchsorted(-s[start:end], -s[at], side="right")) - 1
    return out


def ranking_pairs(dataset: Dataset, ranking: Ranking) -> PredictedPairs:
    """Return every predicted pair of ``ranking``: its own :class:`PredictedPairs` when it
    keeps them, else every entry of its lists (placeholders included, padding not)."""
    if isinstance(ranking, ListedRanking) and ranking.pairs is not None:
        return ranking.pairs
    listed = ranking.top_indices != -1
    q, j = np.nonzero(listed)
    return PredictedPairs(q.astype(np.int64), ranking.top_indices[q, j].astype(np.int64),
                          ranking.top_scores[q, j].astype(np.float64),
                          np.full(len(q), -1, dtype=np.int64))


def micro_of(dataset: Dataset, ranking: Ranking) -> MicroResult:
    """Return isc2021's metrics of ``ranking``'s pairs against ``dataset``'s copies (the
    ``copy`` relevance group of every query; corrected ground truth included)."""
    pairs = ranking_pairs(dataset, ranking)
    owners, members = dataset.group_table(COPY) if COPY in dataset.groups else (
        np.zeros(0, np.int64), np.zeros(0, np.int64))
    return micro_metrics(pairs.query, pairs.result, pairs.score, owners, members)


def copy_detection_results(dataset: Dataset, ranking: Ranking
                           ) -> tuple[dict[str, np.ndarray], dict[str, float | int]]:
    """Return (per-query answers, summary) of a copy-detection evaluation: each query's
    number of answers and best score (nan when it has none), and microAP, recall and
    threshold at precision 90 %, recall at rank 1 and 10, the numbers of predicted and
    ground-truth pairs, and of predictions for queries the ground truth does not list."""
    pairs = ranking_pairs(dataset, ranking)
    result = micro_of(dataset, ranking)
    n_q = dataset.n_queries
    known = pairs.query >= 0
    answers = np.bincount(pairs.query[known], minlength=n_q).astype(np.int64)
    top = np.full(n_q, -np.inf)
    np.maximum.at(top, pairs.query[known], pairs.score[known])
    top[answers == 0] = np.nan
    summary: dict[str, float | int] = {
        "microAP": result.average_precision,
        "recall@P90": math.nan if result.recall_at_p90 is None else result.recall_at_p90,
        "threshold@P90": math.nan if result.threshold_at_p90 is None
        else result.threshold_at_p90,
        "recall@rank1": result.rank1,
        "recall@rank10": result.rank10,
        "n_predictions": len(pairs),
        "n_ground_truth_pairs": result.n_ground_truth,
        "n_outside_queries": int((~known).sum()),
    }
    return {"n_answers": answers, "top_score": top}, summary


# -- pairs from descriptors ------------------------------------------------------------------

@dataclass(frozen=True)
class PairProgress:
    """One step of :func:`iter_pairs`: ``done`` of ``total`` blocks, the pairs at the end."""

    done: int
    total: int
    pairs: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None


def check_dimensions(dim: int, settings: PairSettings, where: str) -> None:
    """Raise InputError when descriptors of ``dim`` dimensions exceed the settings' maximum
    (isc2021 ``compute_metrics_track2``: "maximum dimension exceeded")."""
    if dim > settings.max_dim:
        raise InputError(f"{where}: {dim} dimensions, more than the {settings.max_dim} the "
                         "DISC21 descriptor track accepts (isc2021's max_dim); reduce them "
                         f"(PCA) or give {PAIRS_OPTION} max_dim={dim} to score them anyway")


def iter_pairs(queries: np.ndarray, aligned: AlignedDescriptors, n_gallery: int,
               settings: PairSettings) -> Iterator[PairProgress]:
    """Yield progress while making the pairs of the descriptor track; the last step carries
    (query, gallery index, score) in (query, gallery) order, scores as float32 values.

    ``queries``: the raw (not normalised) float32 query vectors; ``aligned``: the gallery as
    the ranking reads it (chunks of raw float32 rows). The costs are squared L2 distances
    ``|q|² + |r|² − 2 q·r`` in float32, negatives clamped to 0 (faiss's BLAS path), or the
    negated inner products; a pair's score is its negated cost. One multiply gives the
    costs directly (the vectors extended by their squared norms and a 1), and the pairs
    that can still be among the best are picked from each block in threads. Equal costs at
    the cap are kept in (query, gallery) order (faiss leaves that order unspecified).
    """
    q = np.ascontiguousarray(queries, dtype=np.float32)
    n_q, dim = q.shape
    l2 = settings.metric == "l2"
    if l2:  # cost = [-2q, |q|², 1] . [r, 1, |r|²]
        q = np.hstack([-2 * q, np.einsum("ij,ij->i", q, q)[:, None],
                       np.ones((n_q, 1), dtype=np.float32)]).astype(np.float32)
    else:
        q = -q
    rows = chunk_rows(aligned.dim)
    parts = list(chunks(n_gallery, rows))
    block = max(1, min(n_q, BLOCK_SCORES // max(1, min(rows, n_gallery))))
    q_blocks = list(chunks(n_q, block))
    total = len(parts) * len(q_blocks)
    keep = _Kept(settings, n_q)
    buffer = extended = None
    done = 0
    for start, stop in parts:
        n = stop - start
        if buffer is None or extended is None:
            size = min(rows, n_gallery)
            buffer = np.empty((size, dim), dtype=np.float32)
            extended = np.empty((size, q.shape[1]), dtype=np.float32)
        gallery = gallery_chunk(aligned, start, stop, out=buffer)
        extended[:n, :dim] = gallery
        if l2:
            extended[:n, dim] = 1
            extended[:n, dim + 1] = np.einsum("ij,ij->i", gallery, gallery)
        for qa, qb in q_blocks:
            keep.add(q[qa:qb] @ extended[:n].T, qa, start)
            done += 1
            yield PairProgress(done, total)
        if settings.knn is not None and keep.q:
            keep.prune()  # every query's k best so far: later chunks need no partition
    qs, gs, costs = keep.result()
    if l2:
        np.maximum(costs, 0, out=costs)
    yield PairProgress(total, total, (qs, gs, -costs))


class _Kept:
    """The pairs that can still be among the best: under the global cap, every cost at most
    the cap-th best so far; in k-nearest mode, each query's k best so far."""

    def __init__(self, settings: PairSettings, n_q: int) -> None:
        self.knn = settings.knn
        self.cap = settings.cap if settings.cap is not None else MAX_RESULTS
        self.threshold = np.float32(np.inf)
        self.row_threshold = np.full(n_q, np.inf, dtype=np.float32)
        self.q: list[np.ndarray] = []
        self.g: list[np.ndarray] = []
        self.cost: list[np.ndarray] = []
        self.size = 0

    def add(self, cost: np.ndarray, q0: int, g0: int) -> None:
        """Keep the block's pairs (``cost``: queries q0.., gallery g0..) that can matter."""
        n = len(cost)
        if self.knn is not None:
            limit = self.row_threshold[q0:q0 + n].copy()
            unknown = np.flatnonzero(np.isinf(limit))  # no k best yet: this block's k-th
            if len(unknown):
                k = min(self.knn, cost.shape[1])
                limit[unknown] = np.partition(cost[unknown], k - 1, axis=1)[:, k - 1]
            limits = limit[:, None]
        else:
            limit = self.threshold
            if np.isinf(limit) and cost.size > self.cap:  # the block alone fills the cap
                limit = self.threshold = np.partition(cost.ravel(), self.cap - 1)[self.cap - 1]
            limits = np.full((n, 1), limit, dtype=np.float32)
        found: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

        def pick(a: int, b: int) -> None:
            r, c = np.nonzero(cost[a:b] <= limits[a:b])
            found.append((r + a, c, cost[a:b][r, c]))

        run_parts(pick, row_parts(n, cost.size, PARALLEL_SCORES))
        for r, c, values in found:
            self.q.append(r.astype(np.int64) + q0)
            self.g.append(c.astype(np.int64) + g0)
            self.cost.append(values)
            self.size += len(r)
        bound = (2 * self.cap if self.knn is None
                 else 2 * self.knn * max(1, len(self.row_threshold)))
        if self.size > bound:
            self.prune()

    def prune(self) -> None:
        """Keep the best so far: the cap lowest costs (ties at the cap's cost in (query,
        gallery) order: a tie dropped now is never needed later, as the cap's cost only
        falls), found by one partition; or each query's k lowest (ties in gallery order)."""
        q, g, cost = (np.concatenate(x) for x in (self.q, self.g, self.cost))
        if self.knn is None:
            if len(cost) <= self.cap:
                order = np.arange(len(cost))
            else:
                kth = cost[np.argpartition(cost, self.cap - 1)[self.cap - 1]]
                below, tied = np.flatnonzero(cost < kth), np.flatnonzero(cost == kth)
                tied = tied[np.lexsort((g[tied], q[tied]))][:self.cap - len(below)]
                order = np.concatenate([below, tied])
                self.threshold = kth
        else:
            order = np.lexsort((g, cost, q))
            q_sorted = q[order]
            first = np.searchsorted(q_sorted, q_sorted, side="left")
            within = np.arange(len(order)) - first
            kept = within < self.knn
            full = np.flatnonzero(within == self.knn - 1)
            self.row_threshold[q_sorted[full]] = cost[order[full]]
            order = order[kept]
        self.q, self.g, self.cost = [q[order]], [g[order]], [cost[order]]
        self.size = len(order)

    def result(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if not self.q:
            return (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float32))
        self.prune()
        q, g, cost = self.q[0], self.g[0], self.cost[0]
        order = np.lexsort((g, q))
        return q[order], g[order], cost[order]


def ranking_from_pairs(dataset: Dataset, query: np.ndarray, result: np.ndarray,
                       score: np.ndarray, source: str, depth: int,
                       outside: tuple[str, ...] = (),
                       pairs: PredictedPairs | None = None) -> ListedRanking:
    """Return the :class:`ListedRanking` of predicted pairs: each dataset query's pairs by
    descending score, equal scores in the order given (a file's order; the gallery's for
    pairs made from descriptors), the first ``depth`` of each kept as its stored list and
    every pair kept for the pair-scored metrics. ``query`` -1 marks a query the dataset
    does not know: it has no list, but its pairs count."""
    query = np.asarray(query, dtype=np.int64)
    result = np.asarray(result, dtype=np.int64)
    score = np.asarray(score, dtype=np.float64)
    if pairs is None:
        pairs = PredictedPairs(query, result, score, np.full(len(query), -1, dtype=np.int64))
    known = np.flatnonzero(query >= 0)
    order = known[np.lexsort((-score[known], query[known]))]  # stable: ties as given
    q_sorted = query[order]
    bounds = np.searchsorted(q_sorted, np.arange(dataset.n_queries + 1))
    lists = [result[order[a:b]] for a, b in pairwise(bounds)]
    scores = [score[order[a:b]] for a, b in pairwise(bounds)]
    return ranking_from_positions(dataset, lists, scores, outside, source, depth, pairs)


def iter_rank_copy_pairs(descriptors: Descriptors, dataset: Dataset, depth: int,
                         settings: PairSettings) -> Iterator[PairProgress | ListedRanking]:
    """Yield :class:`PairProgress` while making ``dataset``'s pairs from ``descriptors`` as
    the descriptor track does (:func:`iter_pairs`), then the :class:`ListedRanking` of them
    (each query's first ``depth`` stored for the viewer, every pair kept). A copy that no
    pair names keeps its score (its ground-truth pair's negated cost) for the viewer's
    missed positives, never its rank. InputError for more dimensions than the settings
    allow and for the descriptor files' own problems (:func:`align`)."""
    check_dimensions(int(descriptors.dim), settings, descriptors.path.name)
    aligned = align(descriptors, dataset)
    queries = raw_query_vectors(descriptors, dataset)
    found: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    for step in iter_pairs(queries, aligned, dataset.n_gallery, settings):
        found = step.pairs or found
        yield step
    assert found is not None
    qs, gs, scores = found
    ranking = ranking_from_pairs(dataset, qs, gs, scores, settings.describe(), depth)
    missed = (ranking.item_ranks < 0) & np.isnan(ranking.item_scores)
    if missed.any():
        owner = np.repeat(np.arange(dataset.n_queries), np.diff(ranking.item_offsets))[missed]
        items = ranking.item_indices[missed]
        rows = gallery_rows_of(aligned, items)
        products = np.einsum("ij,ij->i", queries[owner], rows)
        if settings.metric == "l2":
            cost = (np.einsum("ij,ij->i", queries[owner], queries[owner])
                    + np.einsum("ij,ij->i", rows, rows) - 2 * products)
            value = -np.maximum(cost, 0)
        else:
            value = products
        item_scores = ranking.item_scores.copy()
        item_scores[missed] = value.astype(np.float32)
        ranking = replace(ranking, item_scores=item_scores)
    yield ranking


def raw_query_vectors(descriptors: Descriptors, dataset: Dataset) -> np.ndarray:
    """Return ``dataset``'s query vectors as float32, not normalised, each matched as
    :func:`~irviewer.core.descriptors.align` matches it (the row named after the query, else
    its image's; the query table first). Call it after ``align``, which has checked that
    every query has a usable row."""
    lookup = descriptors.lookup()
    out = np.empty((dataset.n_queries, descriptors.dim), dtype=np.float32)
    for i, q in enumerate(dataset.queries):
        t, row = lookup.get(name_key(q.name)) or lookup[name_key(q.image)]
        out[i] = descriptors.tables[t].vectors[row]
    return out


def gallery_rows_of(aligned: AlignedDescriptors, items: np.ndarray) -> np.ndarray:
    """Return the raw float32 gallery rows of dataset gallery indices ``items``."""
    rows = items if aligned.gallery_rows is None else aligned.gallery_rows[items]
    return np.asarray(aligned.gallery[rows], dtype=np.float32)
