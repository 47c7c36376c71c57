"""Ranking in per-query pools (HPatches' retrieval task): distances equal in exact
arithmetic keep the candidate order, whatever float64 rounding made of them."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from irviewer.core.pool_ranking import iter_rank_in_pools
from tests.core.helpers import tied_vectors


def exact_order(query: np.ndarray, candidates: np.ndarray) -> list[int]:
    """Return candidate positions by descending -|q - v|^2 in rational arithmetic, equal
    distances in candidate order."""
    q = [Fraction(float(x)) for x in query]
    keys = [sum((a - Fraction(float(b))) ** 2 for a, b in zip(q, v, strict=True))
            for v in candidates]
    return sorted(range(len(candidates)), key=lambda j: (keys[j], j))


@pytest.mark.parametrize("kind", ["decimal", "scaled signs", "signs"])
def test_exact_ties_keep_the_candidate_order(kind):
    """A query's own candidates are scored by direct differences, the pool by the expansion
    |q|^2 - 2 q.v + |v|^2: a duplicate in each comes out a unit of the last place apart.
    The order is nevertheless the exact one (rational arithmetic), ties in candidate order."""
    rng = np.random.default_rng(2)
    dim = {"decimal": 32, "scaled signs": 16, "signs": 16}[kind]
    vectors = tied_vectors(rng, kind, 120, dim)
    queries = vectors[rng.choice(120, 6, replace=False)].copy()
    own = np.stack([rng.choice(np.arange(100, 120), 4, replace=False) for _ in range(6)])
    shared = rng.permutation(100)[:70]
    vectors[own[:, 1]] = vectors[shared[:6]]  # an own candidate duplicated in the pool
    vectors[own[:, 2]] = vectors[shared[6:12]]
    items = [np.concatenate([own[i], shared[:5]]) for i in range(6)]
    steps = list(iter_rank_in_pools(queries, vectors, own, shared, items, k=30, source="t"))
    ranking = steps[-1][2]
    assert ranking is not None
    for i in range(6):
        cands = np.concatenate([own[i], shared])
        order = cands[exact_order(queries[i], vectors[cands])]
        np.testing.assert_array_equal(ranking.top_indices[i], order[:30])
        assert (np.diff(ranking.top_scores[i]) <= 0).all()
        idx, ranks, _ = ranking.items(i)
        position = {int(g): r for r, g in enumerate(order)}
        assert ranks.tolist() == [position[int(g)] for g in idx]
