"""Two rankings compared at one depth: when either stops at K (a precomputed list, an
approximate index's or a vector engine's top K), both are scored on their first K results,
a positive past K counted as missed and every positive in AP's denominator (the rule for
result lists, :func:`~irviewer.core.ranking.from_lists.ranking_from_lists`). Two full
rankings (exact ranks of every positive) are compared whole.

This is the one rule by which compare, the window's compare mode, the approximate search's
ΔAP and the sweep agree: an exhaustive index (FAISS ``Flat``) then differs from the exact
ranking it reproduces by nothing, at any depth.
"""

from __future__ import annotations

from irviewer.core.dataset import Dataset
from irviewer.core.ranking.from_lists import ranking_from_lists
from irviewer.core.ranking.listed import ListedRanking
from irviewer.core.ranking.stored import Ranking


def common_depth(*rankings: Ranking) -> int | None:
    """Return the depth at which ``rankings`` compare: the shortest depth among those that
    stop at their lists (truncated), or None when every one is a full ranking, or when that
    depth holds every image each of them ranks (then the first K results are the whole
    ranking)."""
    depths = [r.k for r in rankings if r.truncated]
    if not depths or min(depths) >= max(r.n_ranked for r in rankings):
        return None
    return min(depths)


def cut_at(ranking: Ranking, dataset: Dataset, k: int) -> Ranking:
    """Return ``ranking``'s first ``k`` results of every query as a truncated ranking (the
    rule for result lists: an item past ``k`` is never retrieved); ``ranking`` itself when
    it is truncated at ``k`` or less already."""
    if ranking.truncated and ranking.k <= k:
        return ranking
    if isinstance(ranking, ListedRanking):  # a listed entry outside the gallery keeps its place
        return ranking.first(dataset, k)
    return ranking_from_lists(dataset, ranking.top_indices[:, :k], ranking.top_scores[:, :k],
                              f"{ranking.source}, first {k}")


__all__ = ["common_depth", "cut_at"]
