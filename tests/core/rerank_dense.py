"""A dense, direct k-reciprocal re-ranking for the tests: every step of Zhong et al.
(CVPR 2017) on whole (N x N) matrices, written from the paper's definitions (and the facts of
the authors' public function), independently of irviewer.core.rerank. Small N only."""

from __future__ import annotations

import numpy as np


def dense_kreciprocal(queries: np.ndarray, gallery: np.ndarray, k1: int, k2: int,
                      lam: float) -> np.ndarray:
    """Return the (n_queries, n_gallery) final distances for unit float32 rows."""
    x = np.concatenate([queries, gallery]).astype(np.float32)
    n, n_q = len(x), len(queries)
    cos = x @ x.T
    d2 = np.maximum(np.float32(2) - np.float32(2) * cos, np.float32(0))
    np.fill_diagonal(d2, 0)
    big = d2.max(axis=1)
    big[big == 0] = 1
    dist = (d2 / big[:, None]).astype(np.float32)
    rank = np.argsort(dist, axis=1, kind="stable")

    def recip(i: int, k: int) -> list[int]:
        forward = rank[i, :k + 1]
        return [int(j) for j in forward if i in rank[j, :k + 1]]

    half = int(np.around(k1 / 2))
    v = np.zeros((n, n), dtype=np.float32)
    for i in range(n):
        r = recip(i, k1)
        members = set(r)
        for c in r:
            rc = recip(c, half)
            if len(set(rc) & set(r)) > 2.0 / 3.0 * len(rc):
                members |= set(rc)
        idx = np.array(sorted(members))
        w = np.exp(-dist[i, idx])
        v[i, idx] = w / w.sum()
    if k2 != 1:
        v = np.stack([v[rank[i, :k2]].mean(axis=0) for i in range(n)])
    final = np.empty((n_q, n - n_q), dtype=np.float32)
    for i in range(n_q):
        m = np.minimum(v[i][None, :], v[n_q:]).sum(axis=1)
        jac = 1 - m / (2 - m)
        final[i] = jac * (1 - lam) + dist[i, n_q:] * lam
    return final


def dense_expansion(base: np.ndarray, pool: np.ndarray, n: int, alpha: float,
                    exclude_self: bool) -> np.ndarray:
    """Return normalise(b + sum over b's n nearest pool rows of max(cos, 0)^alpha p) for each
    row b of ``base`` (pool rows by descending cosine, ties by index; with ``exclude_self``,
    base row i is pool row i and is skipped)."""
    out = base.astype(np.float64).copy()
    cos = base @ pool.T
    for i in range(len(base)):
        order = [j for j in np.argsort(-cos[i], kind="stable") if not (exclude_self and j == i)]
        for j in order[:n]:
            out[i] += max(float(cos[i, j]), 0.0) ** alpha * pool[j]
    return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)
