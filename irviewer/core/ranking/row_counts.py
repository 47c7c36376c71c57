"""The exact rank of items in one query's whole score row (rank = #(scores above) +
#(equal scores earlier in the gallery)), near ties settled by exact score where the ranking
has them: the ranking's rows read back whole (:mod:`irviewer.core.ranking.stored`), where
the block counting (:mod:`irviewer.core.ranking.counting`) does not apply."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from irviewer.core.ranking.settle import Settle, band_edges, settle_items
from irviewer.core.tie_windows import window_edges
from irviewer.core.ties import TIE_TOLERANCE


@dataclass(frozen=True)
class Counted:
    """What :meth:`CountState.finish` found for every item of interest: ``ranks``,
    ``scores`` and the tie windows ``above`` / ``through``
    (:mod:`irviewer.core.tie_windows`)."""

    ranks: np.ndarray
    scores: np.ndarray
    above: np.ndarray
    through: np.ndarray


def ranks_in_row(row: np.ndarray, gallery_indices: np.ndarray,
                 settle: Settle | None = None, query: int = 0) -> np.ndarray:
    """Return exact 0-based ranks of ``gallery_indices`` in query ``query``'s full score row.

    rank(g) = #(scores > row[g]) + #(scores == row[g] at an earlier gallery index), near
    ties settled by exact score when ``settle`` is given; an item whose score is -inf
    (removed) gets -1.
    """
    return counts_in_row(row, gallery_indices, TIE_TOLERANCE, settle, query).ranks


def counts_in_row(row: np.ndarray, gallery_indices: np.ndarray, tolerance: float,
                  settle: Settle | None = None, query: int = 0) -> Counted:
    """Return the :class:`Counted` ranks, scores and tie windows (``tolerance``) of
    ``gallery_indices`` in query ``query``'s full score row (removed entries -inf count
    for nothing; a removed item's rank is -1). With ``settle``, an item with other scores
    in its near band is counted among them by exact score, and its score is its exact one."""
    g = np.asarray(gallery_indices, dtype=np.int64)
    row = np.asarray(row, dtype=np.float32)
    s = row[g]
    ordered = np.sort(row[np.isfinite(row)])
    n = len(ordered)
    above = n - np.searchsorted(ordered, s, side="right")
    ties_before = np.array([np.count_nonzero(row[:gi] == si) for gi, si in zip(g, s, strict=True)],
                           dtype=np.int64) if len(g) else np.zeros(0, dtype=np.int64)
    ranks = (above + ties_before).astype(np.int64)
    upper, lower = window_edges(s, tolerance)
    win_above = (n - np.searchsorted(ordered, upper, side="left")).astype(np.int64)
    through = (n - np.searchsorted(ordered, lower, side="right")).astype(np.int64)
    scores = s.copy()
    if settle is not None:
        b_up, b_lo = band_edges(s)
        far = n - np.searchsorted(ordered, b_up, side="left")
        inside = n - np.searchsorted(ordered, b_lo, side="right") - far
        many = np.flatnonzero(np.isfinite(s) & (inside > 1))
        if len(many):
            members = [np.flatnonzero((row > b_lo[j]) & (row < b_up[j])) for j in many]
            ranks[many], keys = settle_items(
                settle.scores, settle.n_gallery, np.full(len(many), query, dtype=np.int64),
                g[many], far[many], np.repeat(np.arange(len(many)), [len(m) for m in members]),
                np.concatenate(members))
            scores[many] = keys.astype(np.float32)
    ranks[~np.isfinite(s)] = -1
    return Counted(ranks, scores, win_above, through)
