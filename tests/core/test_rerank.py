"""k-reciprocal re-ranking, alpha QE and DBA: the blocked, sparse implementation against a
dense direct one written in the tests (tests/core/rerank_dense.py), a case computed by hand,
ties, AP per query, and the chain's Ranking."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irviewer.core.dataset import Dataset, build_query
from irviewer.core.descriptors import normalise_rows
from irviewer.core.errors import InputError
from irviewer.core.evaluation import evaluate
from irviewer.core.progress import result_of
from irviewer.core.protocols import get_protocol
from irviewer.core.ranking import rank
from irviewer.core.rerank import check_budget, iter_rerank, parse_spec
from irviewer.core.rerank.expansion import expand_queries, iter_dba
from irviewer.core.rerank.kreciprocal import (
    _order_by_distance,
    iter_encode_joined,
    squared_distance,
)
from irviewer.core.rerank.search import cross_top, iter_self_top
from tests.core.helpers import aligned, exact_cosine_order, random_dataset, tied_vectors
from tests.core.rerank_dense import dense_expansion, dense_kreciprocal


def finish(gen):
    """Return a generator's return value, ignoring what it yields."""
    while True:
        try:
            next(gen)
        except StopIteration as done:
            return done.value


def clustered_unit(rng, n, dim, centers=6, noise=0.6):
    c = rng.standard_normal((centers, dim))
    return normalise_rows(c[rng.integers(0, centers, n)] + noise * rng.standard_normal((n, dim)))


def encode(q, g, k1, k2, lam, block_rows=4096):
    vectors = np.concatenate([q, g]).astype(np.float32, copy=False)
    return finish(iter_encode_joined(vectors, len(q), k1, k2, lam, block_rows=block_rows))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), n_q=st.integers(1, 12), n_g=st.integers(2, 60),
       k1=st.integers(1, 25), k2=st.integers(1, 8), lam=st.floats(0, 1),
       block=st.integers(1, 30))
def test_blocked_sparse_equals_dense(seed, n_q, n_g, k1, k2, lam, block):
    rng = np.random.default_rng(seed)
    dim = int(rng.integers(2, 12))
    q, g = clustered_unit(rng, n_q, dim), clustered_unit(rng, n_g, dim)
    mine = encode(q, g, k1, k2, lam, block_rows=block).distance_rows(0, n_q)
    np.testing.assert_allclose(mine, dense_kreciprocal(q, g, k1, k2, lam), atol=1e-6)


def test_a_case_computed_by_hand():
    # Four images on a circle: q at 0 degrees, g0 at 10, g1 at 25, g2 at 180; k1 = 1 (each
    # image's list: itself and its nearest), k2 = 1 (no local expansion), lambda = 0.3.
    def at(deg):
        return [math.cos(math.radians(deg)), math.sin(math.radians(deg))]

    q = np.array([at(0)], dtype=np.float32)
    g = np.array([at(10), at(25), at(180)], dtype=np.float32)

    def d2(a, b):
        return 2 - 2 * math.cos(math.radians(a - b))

    # Nearest: q -> g0, g0 -> q, g1 -> g0, g2 -> g1. Reciprocal: R(q) = {q, g0},
    # R(g0) = {g0, q}, R(g1) = {g1}, R(g2) = {g2}; round(1/2) = 0 adds nothing.
    # Row maxima of d2: q and g0 are farthest from g2.
    dq0 = d2(0, 10) / d2(0, 180)
    d0q = d2(10, 0) / d2(10, 180)
    vq = {"q": 1 / (1 + math.exp(-dq0)), "g0": math.exp(-dq0) / (1 + math.exp(-dq0))}
    v0 = {"g0": 1 / (1 + math.exp(-d0q)), "q": math.exp(-d0q) / (1 + math.exp(-d0q))}
    m = min(vq["q"], v0["q"]) + min(vq["g0"], v0["g0"])
    expected = [0.7 * (1 - m / (2 - m)) + 0.3 * dq0,
                0.7 * 1 + 0.3 * d2(0, 25) / d2(0, 180),
                0.7 * 1 + 0.3 * 1.0]
    got = encode(q, g, 1, 1, 0.3).distance_rows(0, 1)[0]
    np.testing.assert_allclose(got, expected, atol=1e-6)


def test_neighbour_order_with_ties_is_stable_like_a_dense_argsort():
    # Vectors of +-0.25 in 16-d: every cosine is an exact multiple of 1/16, so distances tie
    # a lot; the blocked search with its margin must give the dense stable order exactly.
    rng = np.random.default_rng(3)
    x = rng.choice(np.array([-0.25, 0.25], dtype=np.float32), size=(70, 16))
    x[10] = x[3]  # exact duplicates tie at distance 0 with the image itself
    x[11] = x[3]
    need = 9
    top = result_of(iter_self_top(x, need + 4, "one", row_min=True, block_rows=8))
    scale = squared_distance(top.row_min)
    ranked, dist = _order_by_distance(x, top, scale, need)
    d2 = squared_distance(x @ x.T)
    np.fill_diagonal(d2, 0)
    dense = d2 / d2.max(axis=1)[:, None]
    expected = np.argsort(dense, axis=1, kind="stable")[:, :need]
    np.testing.assert_array_equal(ranked, expected)
    np.testing.assert_array_equal(dist, np.take_along_axis(dense, expected, axis=1))
    assert list(ranked[10, :3]) == [3, 10, 11]  # ties at distance 0 in index order


def test_tied_vectors_give_the_dense_distances():
    rng = np.random.default_rng(5)
    x = rng.choice(np.array([-0.25, 0.25], dtype=np.float32), size=(40, 16))
    q, g = x[:8], x[8:]
    mine = encode(q, g, 6, 3, 0.3, block_rows=7).distance_rows(0, 8)
    np.testing.assert_allclose(mine, dense_kreciprocal(q, g, 6, 3, 0.3), atol=1e-6)


def ap_from_distances(dist, positives, ignored):
    """Finite-sum AP of one query from a row of distances (stable order), by hand."""
    order = [j for j in np.argsort(dist, kind="stable") if j not in ignored]
    hits = [r + 1 for r, j in enumerate(order) if j in positives]
    return sum((i + 1) / r for i, r in enumerate(hits)) / len(positives)


def test_ap_per_query_and_removals_after_reranking():
    rng = np.random.default_rng(11)
    n_q, n_g, dim = 15, 90, 8
    q, g = clustered_unit(rng, n_q, dim), clustered_unit(rng, n_g, dim)
    removed = np.array([4, 17, 60])  # removed for every query: they take no part at all
    ds = random_dataset(rng, n_q, n_g, groups=("positive", "junk"), max_per_group=8,
                        global_ignored=removed)
    chain = parse_spec("k-reciprocal:k1=7,k2=3,lambda=0.2")
    ranking = finish(iter_rerank(chain, aligned(q, g), ds, k=20))
    assert ranking.rerank == "k-reciprocal:k1=7,k2=3,lambda=0.2"
    ev = evaluate(ds, ranking, get_protocol("instance"))
    active = np.setdiff1d(np.arange(n_g), removed)
    dense = dense_kreciprocal(q, g[active], 7, 3, 0.2)
    for i, query in enumerate(ds.queries):
        pos = set(active.searchsorted(np.setdiff1d(query.group("positive"), removed)))
        junk = set(active.searchsorted(np.setdiff1d(query.group("junk"), removed)))
        if not pos:
            assert np.isnan(ev.per_query["AP"][i])
            continue
        assert ev.per_query["AP"][i] == pytest.approx(ap_from_distances(dense[i], pos, junk),
                                                      abs=1e-6)
    # An item outside the stored ones is ranked from the query's re-ranked score row.
    row = ranking.score_row(0)
    assert np.isneginf(row[removed]).all()
    np.testing.assert_allclose(-row[active], dense[0], atol=1e-6)
    worst = int(active[np.argmax(dense[0])])
    assert ranking.rank_items(0, np.array([worst]))[0] == len(active) - 1


def test_a_reranked_ranking_refuses_a_new_photo():
    rng = np.random.default_rng(2)
    q, g = clustered_unit(rng, 4, 6), clustered_unit(rng, 30, 6)
    ds = random_dataset(rng, 4, 30)
    ranking = finish(iter_rerank(parse_spec("aqe"), aligned(q, g), ds, k=5))
    with pytest.raises(InputError, match="cannot score a new photo"):
        ranking.score_vector(q[0])


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(0, 6), alpha=st.sampled_from([0.0, 1.0, 3.0]))
def test_aqe_is_the_weighted_sum_of_the_top_n(seed, n, alpha):
    rng = np.random.default_rng(seed)
    q, g = clustered_unit(rng, 5, 6), clustered_unit(rng, 25, 6)
    np.testing.assert_allclose(expand_queries(q, g, n, alpha),
                               dense_expansion(q, g, n, alpha, exclude_self=False), atol=1e-5)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31), k=st.integers(0, 6), block=st.integers(1, 12))
def test_dba_is_the_weighted_sum_of_the_k_nearest_others(seed, k, block):
    rng = np.random.default_rng(seed)
    g = clustered_unit(rng, 25, 6)
    np.testing.assert_allclose(finish(iter_dba(g, k, 3.0, block_rows=block)),
                               dense_expansion(g, g, k, 3.0, exclude_self=True), atol=1e-5)


@pytest.mark.parametrize("spec", ["aqe:n=0", "dba:k=0", "dba:k=0+aqe:n=0"])
def test_no_neighbours_is_the_plain_ranking(spec):
    rng = np.random.default_rng(8)
    q, g = clustered_unit(rng, 12, 10), clustered_unit(rng, 80, 10)
    ds = random_dataset(rng, 12, 80, global_ignored=np.array([5, 9]))
    plain = rank(aligned(q, g), ds, k=30)
    re = finish(iter_rerank(parse_spec(spec), aligned(q, g), ds, k=30, plain=plain))
    np.testing.assert_array_equal(re.top_indices, plain.top_indices)
    np.testing.assert_array_equal(re.item_ranks, plain.item_ranks)


def test_dba_then_aqe_ranks_expanded_queries_against_the_augmented_gallery():
    rng = np.random.default_rng(4)
    q, g = clustered_unit(rng, 6, 8), clustered_unit(rng, 50, 8)
    ds = random_dataset(rng, 6, 50)
    re = finish(iter_rerank(parse_spec("dba:k=3,alpha=2+aqe:n=2,alpha=1"), aligned(q, g), ds,
                            k=50))
    g2 = dense_expansion(g, g, 3, 2.0, exclude_self=True)
    q2 = dense_expansion(q, g2, 2, 1.0, exclude_self=False)
    expected = np.argsort(-(q2 @ g2.T), axis=1, kind="stable")
    np.testing.assert_array_equal(re.top_indices, expected)


def test_aqe_reuses_the_plain_lists_and_gives_the_same_ranking():
    rng = np.random.default_rng(6)
    q, g = clustered_unit(rng, 9, 8), clustered_unit(rng, 60, 8)
    ds = random_dataset(rng, 9, 60, global_ignored=np.array([0, 33]))
    plain = rank(aligned(q, g), ds, k=10)
    with_plain = finish(iter_rerank(parse_spec("aqe:n=3"), aligned(q, g), ds, k=10, plain=plain))
    searched = finish(iter_rerank(parse_spec("aqe:n=3"), aligned(q, g), ds, k=10))
    np.testing.assert_array_equal(with_plain.top_indices, searched.top_indices)
    assert not np.isin(with_plain.top_indices, [0, 33]).any()


def test_a_search_over_the_budget_is_refused_before_it_starts():
    chain = parse_spec("dba+aqe")
    check_budget(chain, 3368, 19732, 2048)
    with pytest.raises(InputError) as e:
        check_budget(chain, 70, 1_000_000, 2048)
    assert str(e.value) == (
        "--rerank: dba:k=10,alpha=3+aqe:n=2,alpha=3 on 70 queries and 1,000,000 gallery "
        "images of 2048 dimensions needs an all-pairs neighbour search of about 1.0e+15 "
        "multiply-adds, over the budget of 2e+13 (about 10 minutes on two cores); re-rank a "
        "smaller gallery, or use aqe alone")
    check_budget(parse_spec("aqe"), 70, 1_000_000, 2048)  # aqe needs no gallery search


def test_market_style_same_camera_is_removed_after_reranking():
    # The query's same-id same-camera images are in the graph (they shape the encoding) and
    # only removed when the ranking is scored.
    rng = np.random.default_rng(9)
    q, g = clustered_unit(rng, 3, 6, centers=2), clustered_unit(rng, 20, 6, centers=2)
    queries = tuple(build_query(f"q{i}", f"q{i}", {"positive": np.array([i, 5 + i]),
                                                   "same_camera": np.array([10 + i])})
                    for i in range(3))
    ds = Dataset(name="m", format="test", path=None, gallery=tuple(f"g{i}" for i in range(20)),
                 queries=queries, groups=("positive", "same_camera"), protocols=("market1501",))
    ranking = finish(iter_rerank(parse_spec("k-reciprocal:k1=4,k2=2"), aligned(q, g), ds, k=20))
    dense = dense_kreciprocal(q, g, 4, 2, 0.3)
    ev = evaluate(ds, ranking, get_protocol("market1501"))
    for i in range(3):
        assert ev.per_query["AP"][i] == pytest.approx(
            ap_from_distances(dense[i], {i, 5 + i}, {10 + i}), abs=1e-6)


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(0, 300), tied=st.booleans())
def test_packed_key_sort_is_the_lexsort_order(seed, n, tied):
    from irviewer.core.rerank.search import _sorted

    rng = np.random.default_rng(seed)
    rows, cols = rng.integers(5, 40, n), rng.integers(0, 1000, n)
    vals = (rng.choice(np.array([-1, -0.5, 0, -0.0, 0.25, 1, 3e-39], np.float32), n) if tied
            else rng.standard_normal(n).astype(np.float32))
    order = np.lexsort((cols, -vals, rows))
    got = _sorted(rows, cols, vals, 5, 1000)
    for a, b in zip(got, (rows[order], cols[order], vals[order]), strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("block", [1, 4, 9, 64])
def test_kept_query_gallery_cosines_are_the_whole_cross_product(block, monkeypatch):
    from irviewer.core.rerank import kreciprocal

    rng = np.random.default_rng(block)
    q, g = clustered_unit(rng, 9, 5), clustered_unit(rng, 23, 5)
    kept = encode(q, g, 3, 2, 0.3, block_rows=block)
    assert kept.cross is not None
    np.testing.assert_allclose(kept.cross, q @ g.T, atol=1e-6)
    monkeypatch.setattr(kreciprocal, "KEEP_CROSS_BYTES", 0)  # too large: multiply again
    again = encode(q, g, 3, 2, 0.3, block_rows=block)
    assert again.cross is None
    np.testing.assert_allclose(kept.distance_rows(0, 9), again.distance_rows(0, 9), atol=1e-6)


@pytest.mark.parametrize("block_rows", [7, 4096])
def test_neighbour_lists_of_exact_ties_are_in_exact_order(block_rows):
    """Unit vectors of +-c in 32-d: every cosine a multiple of 1/32 in exact arithmetic, a
    few units of the last place apart in float32, differently for every block shape: each
    image's neighbours (itself counted at cosine 1) and each query's gallery neighbours are
    in exact order, equal cosines in index order, however the blocks fall."""
    rng = np.random.default_rng(9)
    x = normalise_rows(tied_vectors(rng, "scaled signs", 60, 32))
    x[7] = x[2]  # a duplicate ties with the image itself
    top = result_of(iter_self_top(x, 12, "one", block_rows=block_rows))
    exact = exact_cosine_order(x, x)
    for i in range(60):
        np.testing.assert_array_equal(top.indices[i], exact[i][:12])
    q, g = x[:9], x[9:]
    across = cross_top(q, g, 10, block_rows=block_rows)
    for i, order in enumerate(exact_cosine_order(q, g)):
        np.testing.assert_array_equal(across.indices[i], order[:10])
