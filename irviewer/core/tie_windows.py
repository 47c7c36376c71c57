"""Tie windows: for an item's score, how many ranked scores lie above its tie window and
how many above the window's lower edge (:mod:`irviewer.core.ties` turns these into tie
groups). Written once here for every ranking maker: the cosine ranking counts them beside
each item's rank, a ranking file and a score row count them directly.

A score t is tied with s when |t - s| < tolerance (:data:`~irviewer.core.ties.TIE_TOLERANCE`
for computed scores; 0 for a ranking file, whose scores tie when equal as written). The
window's edges are float32 values, so that every counter compares the same numbers:
``above`` = #(t >= upper), ``through`` = #(t > lower).
"""

from __future__ import annotations

import numpy as np


def window_edges(scores: np.ndarray, tolerance: float) -> tuple[np.ndarray, np.ndarray]:
    """Return the float32 (upper, lower) edges of the tie windows of ``scores``: a score at
    or above ``upper`` ranks above the window, one at or below ``lower`` below it. With
    tolerance 0 the window holds the equal scores only."""
    s = np.asarray(scores, dtype=np.float32)
    if tolerance <= 0:
        return (np.nextafter(s, np.float32(np.inf)), np.nextafter(s, np.float32(-np.inf)))
    wide = s.astype(np.float64)
    return (wide + tolerance).astype(np.float32), (wide - tolerance).astype(np.float32)


def windows_in_row(row: np.ndarray, scores: np.ndarray,
                   tolerance: float) -> tuple[np.ndarray, np.ndarray]:
    """Return (above, through) of each of ``scores`` among the finite values of a whole
    score row (removed entries are -inf and count for nothing)."""
    ordered = np.sort(np.asarray(row, dtype=np.float32)[np.isfinite(row)])
    upper, lower = window_edges(scores, tolerance)
    n = len(ordered)
    above = n - np.searchsorted(ordered, upper, side="left")
    through = n - np.searchsorted(ordered, lower, side="right")
    return above.astype(np.int64), through.astype(np.int64)


def windows_in_list(listed: np.ndarray, positions: np.ndarray,
                    tolerance: float) -> tuple[np.ndarray, np.ndarray]:
    """Return (above, through) of the entries at ``positions`` of a ranked list's scores
    (descending as ranked, -inf padding; nan when the list has no scores: then nothing is
    tied). Only the list is known, so a tie never reaches beyond it."""
    values = np.asarray(listed, dtype=np.float32)
    pos = np.asarray(positions, dtype=np.int64)
    if not len(pos) or np.isnan(values[pos]).any():
        return pos.copy(), pos + 1
    above, through = windows_in_row(values, values[pos], tolerance)
    return np.minimum(above, pos), np.maximum(through, pos + 1)
