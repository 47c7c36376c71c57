"""Blocked gallery neighbours against brute force, and the near-duplicate hashing."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irviewer.core import neighbours as nb
from irviewer.core.ranking import Ranking
from tests.core.helpers import aligned, exact_cosine_order, sign_vectors, tied_vectors


def gallery_of(vectors: np.ndarray, ignored: np.ndarray | None = None) -> nb.UnitGallery:
    """Return a UnitGallery over ``vectors`` (no queries needed)."""
    n = len(vectors)
    mask = np.zeros(n, dtype=bool)
    if ignored is not None:
        mask[ignored] = True
    r = Ranking(np.zeros((1, 1), np.int64), np.zeros((1, 1), np.float32), np.zeros(2, np.int64),
                np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float32),
                int(n - mask.sum()), descriptors=aligned(vectors[:1], vectors),
                gallery_inv_norms=(1 / np.linalg.norm(vectors, axis=1)).astype(np.float32),
                ignored_mask=mask if mask.any() else None)
    unit = nb.unit_gallery(r)
    assert unit is not None
    return unit


def brute(vectors: np.ndarray, items: np.ndarray, k: int, active: np.ndarray,
          thr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    out, above = [], []
    for i, t in zip(items, thr, strict=True):
        s = (x @ x[i]).astype(np.float32)
        s[~active] = -np.inf
        s[i] = -np.inf
        order = np.argsort(-s, kind="stable")
        order = order[np.isfinite(s[order])][:k]
        out.append(np.pad(order, (0, k - len(order)), constant_values=-1))
        above.append(int(np.count_nonzero(s > t)))
    return np.array(out), np.array(above)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31), st.integers(2, 60), st.integers(1, 8), st.booleans(),
       st.booleans())
def test_nearest_equals_brute_force_with_ties_and_ignored_images(seed, n, k, chunked, cached):
    rng = np.random.default_rng(seed)
    vectors = sign_vectors(rng, n, dim=4)  # many ties, every cosine exact in float32
    ignored = rng.choice(n, size=int(rng.integers(0, n // 3 + 1)), replace=False)
    unit = gallery_of(vectors, ignored)
    items = rng.choice(n, size=min(n, 7), replace=False)
    thr = rng.choice(np.array([-0.5, 0.0, 0.34, 1.0], dtype=np.float32), size=len(items))
    old, old_cache, old_block = nb.CHUNK_ROWS, nb.CACHE_BYTES, nb.BLOCK_BYTES
    nb.CHUNK_ROWS = 5 if chunked else old
    nb.BLOCK_BYTES = 4 * 5 * 3 if chunked else old_block  # blocks of 3 rows, the last shorter
    nb.CACHE_BYTES = old_cache if cached else 0  # read chunk by chunk, never kept
    try:
        found = nb.nearest(unit, items, k, thr[:, None])
    finally:
        nb.CHUNK_ROWS, nb.CACHE_BYTES, nb.BLOCK_BYTES = old, old_cache, old_block
    k_eff = min(k, int(unit.active.sum()))
    expect, above = brute(vectors, items, k_eff, unit.active, thr)
    assert found.indices.tolist() == expect.tolist()
    assert found.above[:, 0].tolist() == above.tolist()


def test_near_identical_pairs_are_found_and_checked_exactly():
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((3000, 64)).astype(np.float32)
    vectors[2500] = vectors[10] + 0.01 * rng.standard_normal(64).astype(np.float32)
    vectors[2999] = vectors[11] * 3.0  # same direction, another scale
    a, b, cos, skipped = nb.near_identical_pairs(gallery_of(vectors), 0.98)
    assert sorted(zip(a.tolist(), b.tolist(), strict=True)) == [(10, 2500), (11, 2999)]
    assert (cos >= 0.98).all() and skipped == 0


def test_near_identical_pairs_leave_out_ignored_images():
    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((50, 16)).astype(np.float32)
    vectors[7] = vectors[3]
    a, _, _, _ = nb.near_identical_pairs(gallery_of(vectors, np.array([7])), 0.98)
    assert 7 not in a.tolist() and len(a) == 0


def test_unit_rows_are_normalised_in_and_out_of_the_cache(monkeypatch):
    rng = np.random.default_rng(2)
    vectors = rng.standard_normal((20, 8)).astype(np.float32) * 5
    expect = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    np.testing.assert_allclose(gallery_of(vectors).rows(np.array([3, 1])), expect[[3, 1]],
                               rtol=1e-6)
    monkeypatch.setattr(nb, "CACHE_BYTES", 0)
    unit = gallery_of(vectors)
    np.testing.assert_allclose(unit.rows(np.array([3, 1])), expect[[3, 1]], rtol=1e-6)
    assert unit._full is None


def test_the_cache_keeps_the_active_images_only_and_still_gives_the_others():
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((12, 8)).astype(np.float32) * 3
    expect = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = gallery_of(vectors, np.array([0, 5, 6]))
    wanted = np.array([5, 1, 0, 11, 6])  # ignored and active images mixed
    np.testing.assert_allclose(unit.rows(wanted), expect[wanted], rtol=1e-6)
    assert unit._full is not None and unit._full.shape == (9, 8)
    chunks = list(unit.active_chunks())
    assert np.concatenate([c for c, _ in chunks]).tolist() == [1, 2, 3, 4, 7, 8, 9, 10, 11]
    np.testing.assert_allclose(np.concatenate([v for _, v in chunks]),
                               expect[[1, 2, 3, 4, 7, 8, 9, 10, 11]], rtol=1e-6)


@pytest.mark.parametrize(("kind", "dim"), [("scaled signs", 32), ("decimal", 6)])
@pytest.mark.parametrize("chunked", [False, True])
def test_neighbours_of_exact_ties_are_in_exact_order(kind, dim, chunked):
    """Cosines equal in exact arithmetic that float32 makes unequal: each image's neighbours
    are in exact cosine order (rational arithmetic), equal ones in gallery order, the list
    cut inside a run of ties as well."""
    rng = np.random.default_rng(6)
    vectors = tied_vectors(rng, kind, 90, dim)
    ignored = rng.choice(90, 8, replace=False)
    unit = gallery_of(vectors, ignored)
    items = rng.choice(np.setdiff1d(np.arange(90), ignored), 12, replace=False)
    old, old_block = nb.CHUNK_ROWS, nb.BLOCK_BYTES
    nb.CHUNK_ROWS = 16 if chunked else old
    nb.BLOCK_BYTES = 4 * 16 * 5 if chunked else old_block
    try:
        found = nb.nearest(unit, items, 9)
    finally:
        nb.CHUNK_ROWS, nb.BLOCK_BYTES = old, old_block
    for row, item in enumerate(items):
        order = exact_cosine_order(vectors[item:item + 1], vectors,
                                   np.append(ignored, item))[0]
        np.testing.assert_array_equal(found.indices[row], order[:9])


@pytest.mark.parametrize(("kind", "dim"), [("scaled signs", 32), ("decimal", 6)])
def test_a_neighbour_list_cut_inside_a_run_of_ties_is_settled_without_a_second_pass(
        kind, dim, monkeypatch):
    """The entries left out near each list's cut are kept as the chunks pass, so a list cut
    inside a run of equal cosines is settled from them: no image's whole row of cosines is
    computed again, and the lists are the exact order."""
    rng = np.random.default_rng(6)
    vectors = tied_vectors(rng, kind, 90, dim)
    unit = gallery_of(vectors, np.zeros(0, dtype=np.int64))
    items = rng.choice(90, 12, replace=False)

    def no_second_pass(*args: object) -> np.ndarray:
        raise AssertionError("a row of cosines was computed again")

    monkeypatch.setattr(nb, "_full_rows", no_second_pass)
    monkeypatch.setattr(nb, "CHUNK_ROWS", 16)
    monkeypatch.setattr(nb, "BLOCK_BYTES", 4 * 16 * 5)
    found = nb.nearest(unit, items, 9)
    exact = vectors.astype(np.float64) @ vectors.astype(np.float64).T
    norms = np.sqrt(np.diag(exact))
    cut_in_a_run = 0
    for row, item in enumerate(items):
        order = exact_cosine_order(vectors[item:item + 1], vectors, np.array([item]))[0]
        np.testing.assert_array_equal(found.indices[row], order[:9])
        cosines = exact[item] / norms / norms[item]
        cut_in_a_run += bool(np.isclose(cosines[order[8]], cosines[order[9]], rtol=0,
                                        atol=1e-12))
    assert cut_in_a_run >= 3  # the case is there


def test_neighbour_lists_with_more_near_ties_at_the_cut_than_are_kept_use_their_rows(
        monkeypatch):
    """Past the number of near ties kept at the lists' cut (a flood of equal cosines), the
    lists concerned are made from their images' whole rows of cosines: the same exact order."""
    rng = np.random.default_rng(6)
    vectors = tied_vectors(rng, "decimal", 90, 6)
    unit = gallery_of(vectors, np.zeros(0, dtype=np.int64))
    items = rng.choice(90, 12, replace=False)
    made_again = []
    real = nb._full_rows

    def counted(*args):
        made_again.append(1)
        return real(*args)

    monkeypatch.setattr(nb, "_full_rows", counted)
    monkeypatch.setattr(nb, "NEAR_CUT_ENTRIES", 0)
    monkeypatch.setattr(nb, "CHUNK_ROWS", 16)
    monkeypatch.setattr(nb, "BLOCK_BYTES", 4 * 16 * 5)
    found = nb.nearest(unit, items, 9)
    assert made_again
    for row, item in enumerate(items):
        order = exact_cosine_order(vectors[item:item + 1], vectors, np.array([item]))[0]
        np.testing.assert_array_equal(found.indices[row], order[:9])
