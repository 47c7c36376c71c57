"""Small dataset and descriptor builders shared by the core tests (seeded, in memory)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from irviewer.core.dataset import Dataset, build_query
from irviewer.core.descriptors import AlignedDescriptors, normalise_rows


def sign_vectors(rng: np.random.Generator, n: int, dim: int = 16) -> np.ndarray:
    """Return n x dim vectors of +-1: every cosine is a multiple of 1/dim, exact in float32."""
    return rng.choice(np.array([-1.0, 1.0], dtype=np.float32), size=(n, dim))


def aligned(queries: np.ndarray, gallery: np.ndarray) -> AlignedDescriptors:
    """Return AlignedDescriptors for query and gallery matrices already in dataset order."""
    return AlignedDescriptors(queries=normalise_rows(queries), gallery=gallery,
                              gallery_rows=None, dim=gallery.shape[1])


def random_dataset(rng: np.random.Generator, n_queries: int, n_gallery: int,
                   groups: tuple[str, ...] = ("positive", "junk"),
                   max_per_group: int = 6, with_self: bool = False,
                   global_ignored: np.ndarray | None = None) -> Dataset:
    """Return a Dataset whose queries have random, disjoint relevance groups."""
    queries = []
    for i in range(n_queries):
        chosen = rng.permutation(n_gallery)
        rel, at = {}, 0
        for g in groups:
            room = n_gallery - at - (1 if with_self else 0)
            size = min(int(rng.integers(0, max_per_group + 1)), max(room, 0))
            rel[g] = chosen[at:at + size]
            at += size
        self_index = int(chosen[at]) if with_self else -1
        if with_self:
            rel[groups[0]] = np.append(rel[groups[0]], self_index)
        queries.append(build_query(f"q{i}", f"img{i}", rel, self_index=self_index))
    return Dataset(name="random", format="test", path=None,
                   gallery=tuple(f"g{i}" for i in range(n_gallery)), queries=tuple(queries),
                   groups=groups, protocols=("instance",),
                   global_ignored=np.zeros(0, np.int64) if global_ignored is None
                   else np.unique(global_ignored))


def brute_force_order(scores: np.ndarray, ignored: np.ndarray | None = None) -> np.ndarray:
    """Return the full stable ranking of one score row (descending, ties by gallery order)."""
    order = np.argsort(-scores.astype(np.float64), kind="stable")
    if ignored is not None and len(ignored):
        order = order[~np.isin(order, ignored)]
    return order


def binary_descriptors(source: Path, out: Path, first: int = 0, dims: int = 12) -> None:
    """Write the .npz ``source``'s ``features`` cut to the signs (about each dimension's
    median) of dimensions first .. first + dims - 1, to ``out``: few distinct cosines, so
    scores tie by the hundreds (the tie bounds' test sets and screenshots)."""
    with np.load(source) as f:
        arrays = {k: f[k] for k in f.files}
    v = arrays["features"][:, first:first + dims]
    arrays["features"] = np.where(v >= np.median(v, axis=0), 1.0, -1.0).astype(np.float32)
    np.savez(out, **arrays)


def exact_cosine_order(queries: np.ndarray, gallery: np.ndarray,
                       ignored: np.ndarray | None = None) -> list[np.ndarray]:
    """Return, per query, the gallery in descending exact cosine order, equal exact cosines
    in gallery order (the rule irviewer promises on every machine), by rational arithmetic
    on the float32 values: cosines compare as sign(d) d^2 / |g|^2 for a dot product d."""
    from fractions import Fraction

    def whole(matrix: np.ndarray) -> list[list[int]]:  # float32 values x 2**160: integers
        return [[int(Fraction(float(v)) * 2**160) for v in row]
                for row in np.asarray(matrix, dtype=np.float32)]

    g_int = whole(gallery)
    squares = [sum(v * v for v in row) for row in g_int]
    drop = set() if ignored is None else {int(i) for i in ignored}
    orders = []
    for q in whole(queries):
        keys = []
        for g, n in zip(g_int, squares, strict=True):
            d = sum(a * b for a, b in zip(q, g, strict=True))
            keys.append(Fraction(-d * abs(d), n))  # ascending = descending cosine
        order = sorted((j for j in range(len(g_int)) if j not in drop),
                       key=lambda j: (keys[j], j))
        orders.append(np.array(order, dtype=np.int64))
    return orders


def tied_vectors(rng: np.random.Generator, kind: str, n: int, dim: int) -> np.ndarray:
    """Return n float32 vectors whose cosines tie exactly and often, and come out of a
    float32 multiply a few units of the last place apart: ``decimal`` (values rounded to one
    decimal, with repeated rows, rows with two coordinates swapped and doubled rows),
    ``scaled signs`` (+-0.3: every cosine a multiple of 1/dim) or ``signs`` (+-1)."""
    if kind == "signs":
        return sign_vectors(rng, n, dim)
    if kind == "scaled signs":
        return sign_vectors(rng, n, dim) * np.float32(0.3)
    v = np.round(rng.uniform(-1, 1, (n, dim)), 1).astype(np.float32)
    for i in range(1, n):
        pick = rng.integers(0, 4)
        j = int(rng.integers(0, i))
        if pick == 0:
            v[i] = v[j]
        elif pick == 1:
            v[i] = v[j]
            a, b = rng.choice(dim, 2, replace=False)
            v[i, [a, b]] = v[j, [b, a]]
        elif pick == 2:
            v[i] = 2 * v[j]
    v[~np.any(v != 0, axis=1), 0] = 0.5  # no all-zero rows
    return v
