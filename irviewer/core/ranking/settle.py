"""Near ties settled by exact scores: the order of a ranking does not depend on the machine.

A ranking's float32 scores come from a matrix multiply whose rounding depends on the BLAS
kernel, the CPU and the thread count: scores equal in exact arithmetic (binarised or
quantised descriptors, duplicates) come out a few units of the last place apart. So the
order is not the float32 scores' but this one, the same on every machine:

* by descending exact score — for a cosine ranking the float64 cosine of the vectors'
  exact dot product and norms (:mod:`irviewer.core.exact_scores`), for HPatches' task pools
  the exact negative squared distance;
* equal exact scores in gallery order.

A float32 cosine of L2-normalised vectors is within ``(NEAR_ABS + NEAR_REL |s|) / 2`` of
its exact value (twice the largest error measured, up to 2048 dimensions, aligned and
opposed vectors of every scale included: 1.0e-7 near 0, 7.6e-7 near 1), so two scores
further apart than :func:`near_band` keep their float32 order, which is then the exact
one. Only scores nearer than that to another are *settled*: their exact scores are
computed (first in plain float64, and exactly where two float64 values are closer than
:data:`AMBIGUOUS`, which plain float64 cannot order reliably) and order them. A settled
entry's stored score is its exact score rounded to float32, so that exact ties show equal
scores and every list's scores descend.

A ranking without exact scores (a ranking file, rows re-ranked elsewhere) keeps the float32
order, equal float32 scores in gallery order.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: Float32 scores closer than NEAR_ABS + NEAR_REL |s| to another are ordered by their exact
#: scores (:func:`near_band`).
NEAR_ABS = 2.5e-7
NEAR_REL = 2e-6
#: Float64 scores closer than this are recomputed exactly before they are compared.
AMBIGUOUS = 1e-10

#: Pairs (queries, gallery indices) -> float64 scores of those pairs.
PairScores = Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Settle:
    """What a ranking settles its near ties with: its exact scores and gallery size."""

    scores: ExactScores
    n_gallery: int


@dataclass(frozen=True)
class NearCut:
    """Entries left out of top-K lists whose score was in the near band of their list's
    last entry when they were left out (:func:`band_edges`): the entries beyond the cut that
    may still order before it by exact score. ``rows`` (list positions), ``indices``
    (gallery indices) and ``values`` (float32 scores), one per entry."""

    rows: np.ndarray
    indices: np.ndarray
    values: np.ndarray

    @staticmethod
    def join(parts: list[NearCut]) -> NearCut:
        """Return the entries of every part, in order."""
        if not parts:
            return NearCut(np.zeros(0, np.int64), np.zeros(0, np.int64),
                           np.zeros(0, np.float32))
        return NearCut(np.concatenate([p.rows for p in parts]),
                       np.concatenate([p.indices for p in parts]),
                       np.concatenate([p.values for p in parts]))


class NearCuts:
    """The entries left out near top-K lists' cut (:class:`NearCut`), kept as the chunks of
    a gallery pass, at most ``limit`` in all (a flood of equal scores would otherwise keep
    a large part of the gallery); parts of a block keep theirs at the same time."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[NearCut] = []
        self.size = 0
        self._lock = threading.Lock()

    def keep(self, cut: NearCut) -> bool:
        """Keep ``cut``'s entries and return True, or return False (nothing kept) when they
        would pass the limit: the lists concerned must then be made again from their rows."""
        with self._lock:
            if self.size + len(cut.rows) > self.limit:
                return False
            self.parts.append(cut)
            self.size += len(cut.rows)
            return True

    def joined(self) -> NearCut:
        """Return every entry kept."""
        return NearCut.join(self.parts)


def near_band(scores: np.ndarray) -> np.ndarray:
    """Return, per float32 score, how close another must be for the two to be ordered by
    exact score: twice the largest float32 error of a cosine of that size (float64)."""
    return NEAR_ABS + NEAR_REL * np.abs(np.asarray(scores, dtype=np.float64))


def band_edges(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return the float32 (upper, lower) edges of each score's near band: a score at or above
    ``upper`` is clearly above it, one at or below ``lower`` clearly below (rounded
    outwards, so that the band holds at least every score within :func:`near_band`)."""
    s = np.asarray(scores, dtype=np.float64)
    wide = near_band(np.where(np.isfinite(s), s, 0.0))  # -inf (removed) stays -inf
    return (np.nextafter((s + wide).astype(np.float32), np.float32(np.inf)),
            np.nextafter((s - wide).astype(np.float32), np.float32(-np.inf)))


@dataclass(frozen=True)
class ExactScores:
    """A ranking's exact scores: ``fast`` in plain float64 (within about 1e-12 of the exact
    value, never exactly reproducible) and ``exact`` (the exact value rounded once), both
    for pairs of (query, gallery index) arrays."""

    fast: PairScores
    exact: PairScores


def pair_keys(scores: ExactScores, n_gallery: int, query: np.ndarray,
              gallery: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return (pair codes, their fast keys, where each given pair is among the codes):
    the distinct (query, gallery) pairs, sorted, each scored once."""
    code = np.asarray(query, dtype=np.int64) * n_gallery + np.asarray(gallery, dtype=np.int64)
    codes, at = np.unique(code, return_inverse=True)
    keys = scores.fast(codes // n_gallery, codes % n_gallery) if len(codes) else np.zeros(0)
    return codes, np.asarray(keys, dtype=np.float64), at.reshape(-1)


def make_exact(scores: ExactScores, n_gallery: int, codes: np.ndarray, keys: np.ndarray,
               which: np.ndarray) -> None:
    """Replace ``keys[which]`` (positions among ``codes``) by the exact scores, in place."""
    which = np.unique(which)
    if len(which):
        keys[which] = scores.exact(codes[which] // n_gallery, codes[which] % n_gallery)


def order_in_groups(scores: ExactScores, n_gallery: int, query: np.ndarray,
                    gallery: np.ndarray, group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return (order, keys): the permutation that sorts the entries (query, gallery image) by
    group (ascending), descending exact score and gallery index, and every entry's key.

    Within a group, keys closer than :data:`AMBIGUOUS` are made exact first, so the order
    is the exact one whatever float64 rounding the machine does."""
    codes, keys, at = pair_keys(scores, n_gallery, query, gallery)
    entry = keys[at]
    first = np.lexsort((gallery, -entry, group))
    g_sorted, k_sorted = group[first], entry[first]
    close = (g_sorted[1:] == g_sorted[:-1]) & (np.abs(k_sorted[1:] - k_sorted[:-1]) <= AMBIGUOUS)
    if close.any():
        make_exact(scores, n_gallery, codes, keys,
                   np.concatenate([at[first[1:][close]], at[first[:-1][close]]]))
        entry = keys[at]
        first = np.lexsort((gallery, -entry, group))
    return first, entry


def settle_items(scores: ExactScores, n_gallery: int, item_query: np.ndarray,
                 item_gallery: np.ndarray, far: np.ndarray, member_item: np.ndarray,
                 member_gallery: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return (ranks, exact scores) of items whose float32 score has others within its near
    band (:func:`band_edges`).

    Item i (query ``item_query[i]``, gallery image ``item_gallery[i]``) has ``far[i]``
    ranked scores at or above its band, and its *members*: every ranked image whose float32
    score is inside the band (entries j with ``member_item[j] == i``; the item itself may be
    listed or not, any other image at most once). Its rank is ``far`` + the members ahead of
    it by exact score, equal exact scores in gallery order. Keys closer than
    :data:`AMBIGUOUS` to the item's are made exact first.
    """
    n = len(item_query)
    item_gallery = np.asarray(item_gallery, dtype=np.int64)
    member_item = np.asarray(member_item, dtype=np.int64)
    member_gallery = np.asarray(member_gallery, dtype=np.int64)
    listed = np.zeros(n, dtype=bool)
    listed[member_item[member_gallery == item_gallery[member_item]]] = True
    member_item = np.concatenate([member_item, np.flatnonzero(~listed)])  # each item itself
    member_gallery = np.concatenate([member_gallery, item_gallery[~listed]])
    codes, keys, at = pair_keys(scores, n_gallery,
                                np.concatenate([item_query[member_item], item_query]),
                                np.concatenate([member_gallery, item_gallery]))
    m_at, i_at = at[:len(member_item)], at[len(member_item):]
    own = member_gallery != item_gallery[member_item]
    near = own & (np.abs(keys[m_at] - keys[i_at][member_item]) <= AMBIGUOUS)
    if near.any():
        make_exact(scores, n_gallery, codes, keys,
                   np.concatenate([m_at[near], i_at[member_item[near]]]))
    km, pivot = keys[m_at], keys[i_at][member_item]
    ahead = own & ((km > pivot) | ((km == pivot) & (member_gallery < item_gallery[member_item])))
    ranks = far + np.bincount(member_item[ahead], minlength=n)
    return ranks.astype(np.int64), keys[i_at]


def near_gaps(values: np.ndarray) -> np.ndarray:
    """Return, for descending float32 ``values`` (lists along the last axis), whether each
    value is within the near band of the next one (:func:`near_band` of the larger of
    the two); -inf padding is near nothing."""
    v = np.asarray(values, dtype=np.float64)
    hi, lo = v[..., :-1], v[..., 1:]
    with np.errstate(invalid="ignore"):
        return hi - lo < near_band(np.maximum(np.abs(hi), np.abs(lo)))


def near_runs(values: np.ndarray) -> np.ndarray:
    """Return, for descending float32 ``values`` (one list), the run each belongs to: a
    new run starts where a value is not within the near band of the one before it."""
    new = np.ones(len(values), dtype=bool)
    new[1:] = ~near_gaps(values)
    return np.cumsum(new) - 1


def settle_lists(scores: ExactScores | None, n_gallery: int, queries: np.ndarray,
                 lists: list[tuple[np.ndarray, np.ndarray]],
                 k: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Return each (gallery indices, float32 scores) list of query ``queries[i]``, ordered by
    descending float32 score and gallery index, with every run of scores within each other's
    near band ordered by exact score (equal ones by gallery index) and scored by it, cut to
    its first ``k``.

    Each list must hold every entry whose float32 score is in the near band of the ``k``-th
    (the entries beyond ``k`` that could order before it). -inf entries (removed) stay last.
    """
    out: list[tuple[np.ndarray, np.ndarray]] = []
    parts: list[tuple[int, np.ndarray, np.ndarray]] = []  # (list, places, runs) to settle
    runs_so_far = 0
    for i, (idx, val) in enumerate(lists):
        idx = np.asarray(idx, dtype=np.int64)
        val = np.asarray(val, dtype=np.float32)
        order = np.lexsort((idx, -val.astype(np.float64)))
        idx, val = idx[order], val[order]  # copies
        out.append((idx, val))
        if scores is None:
            continue
        finite = np.flatnonzero(np.isfinite(val))
        runs = near_runs(val[finite])
        tied = np.bincount(runs)[runs] > 1
        if tied.any():
            parts.append((i, finite[tied], runs[tied] + runs_so_far))
            runs_so_far += int(runs[-1]) + 1
    if parts and scores is not None:
        which = np.concatenate([np.full(len(places), i) for i, places, _ in parts])
        g = np.concatenate([out[i][0][places] for i, places, _ in parts])
        run = np.concatenate([r for _, _, r in parts])
        order, keys = order_in_groups(scores, n_gallery, queries[which], g, run)
        # Entries are in list order and runs numbered in that order, so sorted by run the
        # entries of each list stay together: the entries of a run, in exact order, take
        # the run's places in turn.
        new_g, new_key = g[order], keys[order].astype(np.float32)
        at = 0
        for i, places, _ in parts:
            idx, val = out[i]
            idx[places] = new_g[at:at + len(places)]
            val[places] = new_key[at:at + len(places)]
            at += len(places)
    return [(idx[:k], val[:k]) for idx, val in out]


def settle_runs(scores: ExactScores, n_gallery: int, queries: np.ndarray,
                top_idx: np.ndarray, top_val: np.ndarray, rows: np.ndarray) -> None:
    """Order by exact score, in place, every run of entries within each other's near band
    inside the top-K lists ``rows`` (list ``r`` is query ``queries[r]``'s, descending),
    equal exact scores in gallery order, each entry of a run scored by its exact score: what
    :func:`settle_lists` does to a list whose near ties all lie inside it, for many lists at
    once."""
    if not len(rows):
        return
    val = top_val[rows]
    gap = near_gaps(val)
    in_run = np.zeros(val.shape, dtype=bool)
    in_run[:, :-1] |= gap
    in_run[:, 1:] |= gap
    r, pos = np.nonzero(in_run)  # by list, then place
    if not len(r):
        return
    continued = np.zeros(len(r), dtype=bool)
    inside = pos > 0
    continued[inside] = gap[r[inside], pos[inside] - 1]
    run = np.cumsum(~continued) - 1
    list_of = rows[r]
    g = top_idx[list_of, pos]
    order, keys = order_in_groups(scores, n_gallery, queries[list_of], g, run)
    top_idx[list_of, pos] = g[order]
    top_val[list_of, pos] = keys[order].astype(np.float32)


def settle_top_lists(scores: ExactScores, n_gallery: int, queries: np.ndarray,
                     top_idx: np.ndarray, top_val: np.ndarray, left_out: np.ndarray,
                     rows_of: Callable[[np.ndarray], np.ndarray], runs: bool = True,
                     beyond: NearCut | None = None) -> None:
    """Settle the near ties of finished top-K lists, in place (list ``r`` is query
    ``queries[r]``'s, descending, -1 / -inf padded): a run of entries within each other's
    near band is ordered by exact score from the list itself; a list whose last entry has
    near ties outside it is ordered with them, by exact score, and cut again at K.

    Those near ties come from ``beyond``: entries left out of the lists while they were
    made, whose score was in the near band of the list's last entry of that moment (the
    last entry only rises, so every left-out score in its final band is among them). A
    list whose last entry may have near ties that were not kept (``left_out[r]``, the best
    score left out and not in ``beyond``, or an upper bound of the scores never looked at,
    is in its near band) is made again from its whole score row, ``rows_of(list
    positions)`` (-inf where excluded): only the rare list whose cut falls inside a run of
    near ties that were not kept costs a row. ``runs=False`` leaves the runs inside the
    lists that have no near ties beyond them (:class:`PendingRuns` settles them when the
    lists are read)."""
    k = top_val.shape[1]
    if k == 0 or not len(top_val):
        return
    kth = top_val[:, -1]
    lower = band_edges(kth)[1]
    inner = near_gaps(top_val).any(axis=1)
    outside = np.isfinite(kth) & (np.asarray(left_out, dtype=np.float32) > lower)
    extra = np.zeros(len(top_val), dtype=bool)
    if beyond is not None and len(beyond.rows):
        r = beyond.rows
        keep = np.isfinite(kth[r]) & (beyond.values > lower[r]) & ~outside[r]
        r, idx, val = r[keep], beyond.indices[keep], beyond.values[keep]
        extra[r] = True
        order = np.argsort(r, kind="stable")
        r, idx, val = r[order], idx[order], val[order]
        with_extra = np.flatnonzero(extra)
        bounds = np.searchsorted(r, np.append(with_extra, len(top_val)))
        lists = [(np.concatenate([top_idx[q], idx[a:b]]), np.concatenate([top_val[q], val[a:b]]))
                 for q, a, b in zip(with_extra.tolist(), bounds[:-1].tolist(),
                                    bounds[1:].tolist(), strict=True)]
        settled = settle_lists(scores, n_gallery, queries[with_extra], lists, k)
        for q, (s_idx, s_val) in zip(with_extra.tolist(), settled, strict=True):
            top_idx[q], top_val[q] = s_idx, s_val
    if runs:
        settle_runs(scores, n_gallery, queries, top_idx, top_val,
                    np.flatnonzero(inner & ~outside & ~extra))
    again = np.flatnonzero(outside)
    step = 256
    for s in range(0, len(again), step):
        rs = again[s:s + step]
        lists = []
        for row in rows_of(rs):
            kept = np.flatnonzero(np.isfinite(row))
            values = row[kept]
            if len(values) > k:
                cut = np.partition(values, len(values) - k)[len(values) - k]
                near = values > band_edges(np.array([cut]))[1][0]
                kept, values = kept[near], values[near]
            lists.append((kept, values))
        settled = settle_lists(scores, n_gallery, queries[rs], lists, k)
        for r, (idx, v) in zip(rs.tolist(), settled, strict=True):
            top_idx[r], top_val[r] = -1, -np.inf
            top_idx[r, :len(idx)], top_val[r, :len(v)] = idx, v


class PendingRuns:
    """The runs of near ties inside a ranking's top-K lists, settled the first time the
    lists are read (:func:`settle_runs`; thread-safe, once). The metrics never read the
    lists, so an evaluation does not pay for ordering near ties among the images that do not
    count; the window, the exports, the audit and the approximate search read them settled.
    A list whose last entry has near ties outside it is settled while ranking, not here."""

    def __init__(self, scores: ExactScores, n_gallery: int) -> None:
        self.scores, self.n_gallery = scores, n_gallery
        self.done = False
        self._lock = threading.Lock()

    def settle(self, top_idx: np.ndarray, top_val: np.ndarray) -> None:
        """Settle every list's inner runs in place, unless done already."""
        if self.done:
            return
        with self._lock:
            if self.done:
                return
            settle_runs(self.scores, self.n_gallery, np.arange(len(top_idx)), top_idx, top_val,
                        np.flatnonzero(near_gaps(top_val).any(axis=1)))
            self.done = True
