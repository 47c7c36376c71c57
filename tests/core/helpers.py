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
