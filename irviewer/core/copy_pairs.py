"""Pairs made from descriptors as the Image Similarity Challenge's descriptor track makes
them (DISC21; the metrics over the pairs: :mod:`irviewer.core.copy_detection`).

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

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from irviewer.core.copy_detection import ranking_from_pairs
from irviewer.core.dataset import Dataset
from irviewer.core.descriptors import AlignedDescriptors, Descriptors, align, name_key
from irviewer.core.errors import InputError, either
from irviewer.core.parallel import row_parts, run_parts
from irviewer.core.ranking.gallery import PARALLEL_SCORES, chunk_rows, chunks, gallery_chunk
from irviewer.core.ranking.listed import ListedRanking

#: isc2021's defaults: ``--max_results``, ``--max_dim``.
MAX_RESULTS, MAX_DIM = 500_000, 256
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
