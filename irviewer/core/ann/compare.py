"""What an approximate search cost each query, under a protocol: ΔAP and ΔP@1 against the
exact ranking of the same descriptors, the positives the index lost and where the exact
ranking had them, and, over a sweep, the first setting at which a query gets its exact AP
back."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from irviewer.core.evaluation import POSITIVE, Evaluation

#: AP within this of the exact AP counts as reached (float32 scores, float64 sums).
REACHED = 1e-9


@dataclass(frozen=True)
class LostPositive:
    """A positive the exact ranking lists within the depth and the approximate one does
    not: its gallery index and its 0-based exact rank."""

    gallery: int
    exact_rank: int


@dataclass(frozen=True)
class ExactComparison:
    """Per query (dataset order): ``delta_ap`` and ``delta_p1`` (approximate minus exact;
    nan for a query left out of the means), and ``lost`` (the lost positives, exact rank
    order)."""

    delta_ap: np.ndarray
    delta_p1: np.ndarray
    lost: tuple[tuple[LostPositive, ...], ...]

    @property
    def broken(self) -> np.ndarray:
        """Return the queries (positions) whose AP the index lowered, largest loss first."""
        d = np.where(np.isfinite(self.delta_ap), self.delta_ap, 0.0)
        hurt = np.flatnonzero(d < -REACHED)
        return hurt[np.argsort(d[hurt], kind="stable")]


def compare_with_exact(exact: Evaluation, approx: Evaluation) -> ExactComparison:
    """Return how ``approx`` (an approximate search's evaluation) differs from ``exact`` (the
    exact ranking of the same descriptors under the same protocol), query by query."""
    ap_e = np.asarray(exact.per_query["AP"], dtype=np.float64)
    ap_a = np.asarray(approx.per_query["AP"], dtype=np.float64)
    p1 = "P@1" if "P@1" in exact.per_query else None
    delta_p1 = (np.asarray(approx.per_query[p1], dtype=np.float64)
                - np.asarray(exact.per_query[p1], dtype=np.float64)) if p1 else \
        np.full(len(ap_e), np.nan)
    depth = approx.ranking.k
    lost: list[tuple[LostPositive, ...]] = []
    er, ar = exact.ranking, approx.ranking
    same_items = np.array_equal(er.item_offsets, ar.item_offsets) and \
        np.array_equal(er.item_indices, ar.item_indices)
    for q in range(len(ap_e)):
        a, b = ar.item_offsets[q], ar.item_offsets[q + 1]
        items = ar.item_indices[a:b]
        if not len(items):
            lost.append(())
            continue
        exact_ranks = er.item_ranks[a:b] if same_items else er.rank_items(q, items)
        positive = approx.relevance(q, items) == POSITIVE
        gone = positive & (ar.item_ranks[a:b] < 0) & (exact_ranks >= 0) & \
            (exact_ranks < depth)
        found = sorted(zip(exact_ranks[gone].tolist(), items[gone].tolist(), strict=True))
        lost.append(tuple(LostPositive(int(g), int(r)) for r, g in found))
    return ExactComparison(ap_a - ap_e, delta_p1, tuple(lost))


def first_reaching(exact: Evaluation, sweep: Sequence[Evaluation]) -> np.ndarray:
    """Return, per query, the position in ``sweep`` (settings in order) of the first setting
    whose AP is at least the exact AP (within :data:`REACHED`); -1 when none does, or the
    query is left out of the means."""
    ap_e = np.asarray(exact.per_query["AP"], dtype=np.float64)
    out = np.full(len(ap_e), -1, dtype=np.int64)
    for i, ev in enumerate(sweep):
        ap = np.asarray(ev.per_query["AP"], dtype=np.float64)
        now = (out < 0) & np.isfinite(ap_e) & (ap >= ap_e - REACHED)
        out[now] = i
    return out


__all__ = ["REACHED", "ExactComparison", "LostPositive", "compare_with_exact",
           "first_reaching"]
