"""Ranking against a brute-force full stable sort: top-K, exact item ranks, ties, chunks."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irviewer.core import parallel
from irviewer.core.dataset import Dataset, build_query
from irviewer.core.descriptors import AlignedDescriptors, normalise_rows
from irviewer.core.errors import InputError
from irviewer.core.ranking import (
    counting,
    gallery,
    iter_rank,
    rank,
    ranker,
    ranks_in_row,
    top_of_row,
)
from tests.core.helpers import (
    aligned,
    brute_force_order,
    exact_cosine_order,
    random_dataset,
    sign_vectors,
    tied_vectors,
)


def exact_scores(q: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Cosine of +-1 vectors computed in float64 (exact: multiples of 1/dim)."""
    qn = q / np.linalg.norm(q, axis=1, keepdims=True)
    gn = g / np.linalg.norm(g, axis=1, keepdims=True)
    return qn.astype(np.float64) @ gn.astype(np.float64).T


#: How a block of scores is folded in: whatever the data call for; rows always sorted whole
#: (when the gallery is one chunk); only candidates sorted; split between three threads.
PATHS = ("default", "sort whole", "candidates", "threads")


@contextmanager
def ranking_path(path: str) -> Iterator[None]:
    """Force one of :data:`PATHS` in core.ranking.ranker for the duration."""
    saved = (ranker.SORT_WHOLE_FRACTION, ranker.PARALLEL_SCORES, gallery.PARALLEL_SCORES,
             parallel.WORKERS)
    if path == "sort whole":
        ranker.SORT_WHOLE_FRACTION = -1.0
    elif path == "candidates":
        ranker.SORT_WHOLE_FRACTION = 2.0
    elif path == "threads":
        parallel.WORKERS, ranker.PARALLEL_SCORES, gallery.PARALLEL_SCORES = 3, 1, 1
    try:
        yield
    finally:
        (ranker.SORT_WHOLE_FRACTION, ranker.PARALLEL_SCORES, gallery.PARALLEL_SCORES,
         parallel.WORKERS) = saved


def check_against_brute_force(seed: int, n_q: int, n_g: int, k: int, chunk: int | None,
                              block: int | None, n_ignored: int = 0,
                              path: str = "default") -> None:
    with ranking_path(path):
        _check_against_brute_force(seed, n_q, n_g, k, chunk, block, n_ignored)


def _check_against_brute_force(seed: int, n_q: int, n_g: int, k: int, chunk: int | None,
                               block: int | None, n_ignored: int) -> None:
    rng = np.random.default_rng(seed)
    qv, gv = sign_vectors(rng, n_q), sign_vectors(rng, n_g)
    gv[rng.integers(0, n_g, size=n_g // 4)] = gv[0]  # duplicate vectors: exact ties
    ignored = rng.choice(n_g, size=n_ignored, replace=False) if n_ignored else None
    ds = random_dataset(rng, n_q, n_g, with_self=True, global_ignored=ignored)
    steps = list(iter_rank(aligned(qv, gv), ds, k=k, gallery_chunk_rows=chunk,
                           query_block_rows=block))
    result = steps[-1].ranking
    assert result is not None
    s = exact_scores(qv, gv)
    for qi in range(n_q):
        order = brute_force_order(s[qi], ignored)
        kk = min(k, len(order))
        np.testing.assert_array_equal(result.top_indices[qi, :kk], order[:kk])
        assert (result.top_indices[qi, kk:] == -1).all()
        np.testing.assert_allclose(result.top_scores[qi, :kk], s[qi, order[:kk]], atol=1e-6)
        idx, ranks, scores = result.items(qi)
        position = np.full(n_g, -1)
        position[order] = np.arange(len(order))
        np.testing.assert_array_equal(ranks, position[idx])
        np.testing.assert_allclose(scores, s[qi, idx], atol=1e-6)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(("chunk", "block"), [(None, None), (7, 3), (50, 1), (64, 100)])
def test_matches_brute_force_with_ties_and_chunks(chunk, block, path):
    check_against_brute_force(1, n_q=12, n_g=150, k=20, chunk=chunk, block=block, path=path)


#: Data whose cosines tie exactly and often, and what each one's dimension is.
TIED = {"decimal": 6, "scaled signs": 32, "signs": 128}


def raw_aligned(queries: np.ndarray, gallery: np.ndarray) -> AlignedDescriptors:
    """Return AlignedDescriptors as :func:`irviewer.core.descriptors.align` makes them: unit
    query vectors, and the values as the file holds them."""
    return AlignedDescriptors(queries=normalise_rows(queries), gallery=gallery,
                              gallery_rows=None, dim=gallery.shape[1], query_values=queries)


@pytest.mark.parametrize("kind", list(TIED))
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(("chunk", "block"), [(None, None), (23, 3), (64, 1)])
def test_exact_ties_keep_gallery_order_however_float32_rounds_them(kind, path, chunk, block):
    """Scores equal in exact arithmetic come out of the float32 multiply a few units of the
    last place apart, differently for each block shape, path and thread split: the top-K
    lists and every item's rank are nevertheless the exact order (rational arithmetic),
    equal exact cosines in gallery order."""
    rng = np.random.default_rng(11)
    dim = TIED[kind]
    qv, gv = tied_vectors(rng, kind, 7, dim), tied_vectors(rng, kind, 160, dim)
    ignored = rng.choice(160, 9, replace=False)
    ds = random_dataset(rng, 7, 160, max_per_group=20, with_self=True, global_ignored=ignored)
    with ranking_path(path):
        result = rank(raw_aligned(qv, gv), ds, k=25) if chunk is None else list(
            iter_rank(raw_aligned(qv, gv), ds, k=25, gallery_chunk_rows=chunk,
                      query_block_rows=block))[-1].ranking
    assert result is not None
    for q, order in enumerate(exact_cosine_order(qv, gv, ds.global_ignored)):
        np.testing.assert_array_equal(result.top_indices[q], order[:25])
        assert (np.diff(result.top_scores[q]) <= 0).all()  # settled scores descend
        idx, ranks, _ = result.items(q)
        position = np.full(160, -1)
        position[order] = np.arange(len(order))
        np.testing.assert_array_equal(ranks, position[idx])
        # A score row made again is ordered as the ranking: ranks, and lists beyond K.
        others = np.setdiff1d(np.arange(160), np.concatenate([idx, ds.global_ignored]))
        np.testing.assert_array_equal(result.rank_items(q, others), position[others])
        np.testing.assert_array_equal(result.ranked(q, 60)[0], order[:60])


@pytest.mark.parametrize("kind", list(TIED))
@pytest.mark.parametrize("path", PATHS)
def test_near_ties_at_the_cut_of_a_chunked_ranking_are_settled_without_a_second_pass(
        kind, path, monkeypatch):
    """A list whose K-th entry ties with scores beyond it, in a gallery ranked chunk by
    chunk, is settled from the entries kept near its cut as the chunks passed: no query's
    whole score row is made again (a second pass over the gallery), and the lists are the
    exact order, equal exact cosines in gallery order."""
    rng = np.random.default_rng(11)
    dim = TIED[kind]
    qv, gv = tied_vectors(rng, kind, 7, dim), tied_vectors(rng, kind, 160, dim)
    ds = random_dataset(rng, 7, 160, max_per_group=20, with_self=True)

    def no_second_pass(*args: object) -> np.ndarray:
        raise AssertionError("a score row was made again")

    monkeypatch.setattr(ranker, "score_rows_of", no_second_pass)
    with ranking_path(path):
        result = list(iter_rank(raw_aligned(qv, gv), ds, k=25, gallery_chunk_rows=23,
                                query_block_rows=3))[-1].ranking
    assert result is not None
    exact = exact_scores(qv, gv)
    tied_at_cut = 0
    for q, order in enumerate(exact_cosine_order(qv, gv, ds.global_ignored)):
        np.testing.assert_array_equal(result.top_indices[q], order[:25])
        tied_at_cut += exact[q, order[24]] == exact[q, order[25]]
    assert tied_at_cut >= 3  # the case is there: lists cut inside a run of equal cosines


def test_lists_with_more_near_ties_at_the_cut_than_are_kept_are_made_from_their_rows(
        monkeypatch):
    """Past the number of near ties a block keeps at the lists' cut (a flood of equal
    scores), the lists concerned are made again from their queries' score rows: the same
    exact order, at the cost of a second pass."""
    rng = np.random.default_rng(11)
    qv, gv = tied_vectors(rng, "decimal", 7, 6), tied_vectors(rng, "decimal", 160, 6)
    ds = random_dataset(rng, 7, 160, max_per_group=20, with_self=True)
    made_again = []
    real = ranker.score_rows_of

    def counted(*args: object) -> np.ndarray:
        made_again.append(1)
        return real(*args)

    monkeypatch.setattr(ranker, "_NEAR_CUT_ENTRIES", 0)
    monkeypatch.setattr(ranker, "score_rows_of", counted)
    result = list(iter_rank(raw_aligned(qv, gv), ds, k=25, gallery_chunk_rows=23,
                            query_block_rows=3))[-1].ranking
    assert result is not None and made_again
    for q, order in enumerate(exact_cosine_order(qv, gv, ds.global_ignored)):
        np.testing.assert_array_equal(result.top_indices[q], order[:25])


@pytest.mark.parametrize("path", PATHS)
def test_tie_windows_are_the_exact_tie_groups(path):
    """With scores that are equal or far apart in exact arithmetic (multiples of 1/32), an
    item's tie window is exactly its group of equal cosines, whatever float32 made of them."""
    rng = np.random.default_rng(4)
    qv, gv = tied_vectors(rng, "scaled signs", 5, 32), tied_vectors(rng, "scaled signs", 120, 32)
    ds = random_dataset(rng, 5, 120, max_per_group=30)
    with ranking_path(path):
        result = rank(raw_aligned(qv, gv), ds, k=10)
    exact = np.sign(qv) @ np.sign(gv).T  # whole dot products of the signs
    assert result.item_tie_above is not None and result.item_tie_through is not None
    for q in range(5):
        a, b = result.item_offsets[q], result.item_offsets[q + 1]
        d = exact[q, result.item_indices[a:b]]
        np.testing.assert_array_equal(result.item_tie_above[a:b],
                                      (exact[q][None, :] > d[:, None]).sum(axis=1))
        np.testing.assert_array_equal(result.item_tie_through[a:b],
                                      (exact[q][None, :] >= d[:, None]).sum(axis=1))
        # A tied item's score is its exact cosine (equal for every member of the group).
        tied = (exact[q][None, :] == d[:, None]).sum(axis=1) > 1
        np.testing.assert_array_equal(result.item_scores[a:b][tied], d[tied] / 32)
        np.testing.assert_allclose(result.item_scores[a:b], d / 32, atol=1e-6)


@pytest.mark.parametrize("path", PATHS)
def test_globally_ignored_images_are_never_ranked(path):
    check_against_brute_force(2, n_q=8, n_g=90, k=30, chunk=16, block=4, n_ignored=25,
                              path=path)
    check_against_brute_force(2, n_q=8, n_g=90, k=30, chunk=None, block=None, n_ignored=25,
                              path=path)


@pytest.mark.parametrize("path", PATHS)
def test_k_larger_than_gallery_pads_with_minus_one(path):
    check_against_brute_force(3, n_q=3, n_g=10, k=50, chunk=None, block=None, n_ignored=2,
                              path=path)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n_g=st.integers(1, 60), k=st.integers(1, 70),
       chunk=st.sampled_from([None, 1, 5, 17]), block=st.sampled_from([None, 1, 4]),
       path=st.sampled_from(PATHS))
def test_property_matches_brute_force(seed, n_g, k, chunk, block, path):
    check_against_brute_force(seed, n_q=5, n_g=n_g, k=k, chunk=chunk, block=block, path=path)


def test_deep_items_sort_rows_whole_and_shallow_ones_do_not(monkeypatch):
    """The rows are sorted whole exactly when most of a block's scores reach the lowest
    item of interest; the result is the same either way (checked above)."""
    sorted_whole = []
    real_sort = np.sort

    def counting_sort(a, *args, **kwargs):
        if getattr(a, "ndim", 1) == 2:
            sorted_whole.append(a.shape)
        return real_sort(a, *args, **kwargs)

    monkeypatch.setattr(ranker.np, "sort", counting_sort)
    rng = np.random.default_rng(4)
    qv, gv = sign_vectors(rng, 6, 64), sign_vectors(rng, 400, 64)
    deep = random_dataset(rng, 6, 400, max_per_group=60)  # random items: half rank deep
    rank(aligned(qv, gv), deep, k=10)
    assert sorted_whole == [(6, 400)]
    sorted_whole.clear()
    gv[:4] = qv[0]  # query 0's only items are its four copies: they rank first
    shallow = random_dataset(rng, 6, 400, max_per_group=0)
    rank(aligned(qv, gv), shallow, k=10)
    assert sorted_whole == []


@pytest.mark.parametrize(("n_g", "k", "chunk"), [(700, 5, None), (700, 5, 300), (400, 40, None)])
def test_long_rows_cut_at_a_sampled_threshold_match_brute_force(n_g, k, chunk):
    """Rows much longer than K take the sampled-threshold path (every 8th or 2nd column)."""
    check_against_brute_force(6, n_q=9, n_g=n_g, k=k, chunk=chunk, block=4, n_ignored=30)


def test_a_misleading_sample_falls_back_to_the_exact_kth_score():
    """The only high scores sit on sampled columns (every 8th), so the sample's estimate of
    the K-th score is too high (4 scores reach it, not K); the row is cut again at its exact
    K-th score."""
    rng = np.random.default_rng(7)
    n_g, k, dim = 640, 10, 16
    qv = sign_vectors(rng, 2, dim)
    gv = sign_vectors(rng, n_g, dim)
    gv[0:32:8] = qv[0]  # columns 0, 8, 16, 24: the first query itself (score 1)
    ds = random_dataset(rng, 2, n_g, max_per_group=0)
    r = rank(aligned(qv, gv), ds, k=k)
    s = exact_scores(qv, gv)
    for qi in range(2):
        np.testing.assert_array_equal(r.top_indices[qi], brute_force_order(s[qi])[:k])


def test_gaussian_data_top_k_and_ranks_agree_with_score_row():
    """Real-valued data: the stored lists and ranks equal a full stable sort of the row."""
    rng = np.random.default_rng(4)
    qv = rng.standard_normal((20, 64)).astype(np.float32)
    gv = rng.standard_normal((3000, 64)).astype(np.float32)
    gv[100:110] = gv[5]
    ds = random_dataset(rng, 20, 3000, max_per_group=40, with_self=True)
    for chunk in (None, 700):
        r = rank(aligned(qv, gv), ds, k=50) if chunk is None else list(
            iter_rank(aligned(qv, gv), ds, k=50, gallery_chunk_rows=chunk))[-1].ranking
        for qi in range(20):
            row = r.score_row(qi)
            order = brute_force_order(row)
            np.testing.assert_array_equal(r.top_indices[qi], order[:50])
            idx, ranks, _ = r.items(qi)
            position = np.empty(3000, dtype=np.int64)
            position[order] = np.arange(3000)
            np.testing.assert_array_equal(ranks, position[idx])


def test_chunks_after_an_items_own_count_on_its_exact_score(monkeypatch):
    """Once an item's own chunk is ranked its score is known: the later chunks count the
    scores above it exactly (an equal score there ranks after it) and keep nothing to
    resolve at the end. Items all in the first chunk, copies of them in later ones: the
    ranks equal a full stable sort of the row, and no chunk keeps a band."""
    rng = np.random.default_rng(9)
    qv = rng.standard_normal((6, 32)).astype(np.float32)
    gv = rng.standard_normal((2000, 32)).astype(np.float32)
    gv[1500:1504] = gv[3]  # exact ties with an item, three chunks after its own
    queries = tuple(build_query(f"q{i}", f"img{i}", {"positive": rng.choice(500, 30, False)})
                    for i in range(6))
    ds = Dataset(name="first chunk", format="test", path=None,
                 gallery=tuple(f"g{i}" for i in range(2000)), queries=queries,
                 groups=("positive",), protocols=("instance",))

    def no_band(state: object, item: np.ndarray, *args: object) -> None:
        assert not len(item), "a band was kept for an item whose score is known"

    monkeypatch.setattr(counting.CountState, "_keep_band", no_band)
    for path in PATHS:
        with ranking_path(path):
            r = list(iter_rank(aligned(qv, gv), ds, k=20, gallery_chunk_rows=500))[-1].ranking
        for qi in range(6):
            order = brute_force_order(r.score_row(qi))
            position = np.empty(2000, dtype=np.int64)
            position[order] = np.arange(2000)
            idx, ranks, _ = r.items(qi)
            np.testing.assert_array_equal(ranks, position[idx])


def test_score_rows_of_a_block_are_the_rows_of_its_queries():
    """A block of score rows, over several gallery chunks, equals each query's own row
    (up to float32 rounding of the multiply) with the removed images at -inf."""
    rng = np.random.default_rng(6)
    qv = rng.standard_normal((9, 32)).astype(np.float32)
    gv = rng.standard_normal((500, 32)).astype(np.float32)
    ds = random_dataset(rng, 9, 500, global_ignored=np.array([3, 77]))
    r = list(iter_rank(aligned(qv, gv), ds, k=10, gallery_chunk_rows=128))[-1].ranking
    block = r.score_rows(2, 7)
    assert block.shape == (5, 500) and block.dtype == np.float32
    for i, q in enumerate(range(2, 7)):
        np.testing.assert_allclose(block[i], r.score_row(q), rtol=0, atol=1e-6)
    assert np.isneginf(block[:, [3, 77]]).all() and np.isfinite(np.delete(block, [3, 77], 1)).all()


def test_negative_scores_rank_like_any_other():
    """Relevance never depends on the sign of a score: an all-negative row ranks normally."""
    q = np.array([[1.0, 0.0]], dtype=np.float32)
    g = np.array([[-1.0, 0.1], [-1.0, 1.0], [-0.2, -1.0], [-1.0, -0.0]], dtype=np.float32)
    ds = random_dataset(np.random.default_rng(0), 1, 4, max_per_group=0)
    r = rank(aligned(q, g), ds, k=4)
    expected = np.argsort(-(g[:, 0] / np.linalg.norm(g, axis=1)), kind="stable")
    np.testing.assert_array_equal(r.top_indices[0], expected)
    assert (r.top_scores[0] < 0).all()


def test_rank_items_outside_the_stored_items_uses_the_score_row():
    rng = np.random.default_rng(5)
    qv, gv = sign_vectors(rng, 4), sign_vectors(rng, 80)
    ds = random_dataset(rng, 4, 80, max_per_group=2)
    r = rank(aligned(qv, gv), ds, k=5)
    s = exact_scores(qv, gv)
    for qi in range(4):
        order = brute_force_order(s[qi])
        position = np.empty(80, dtype=np.int64)
        position[order] = np.arange(80)
        wanted = np.arange(80)
        np.testing.assert_array_equal(r.rank_items(qi, wanted), position[wanted])


def test_ranks_in_row_breaks_ties_by_gallery_order():
    row = np.array([0.5, 0.9, 0.5, -np.inf, 0.9], dtype=np.float32)
    np.testing.assert_array_equal(ranks_in_row(row, np.arange(5)), [2, 0, 3, -1, 1])


def test_progress_is_reported_and_generator_can_stop_early():
    rng = np.random.default_rng(6)
    qv, gv = sign_vectors(rng, 10), sign_vectors(rng, 100)
    ds = random_dataset(rng, 10, 100)
    gen = iter_rank(aligned(qv, gv), ds, k=5, gallery_chunk_rows=10, query_block_rows=5)
    first, second = next(gen), next(gen)
    assert (first.done, first.total) == (0, 20)
    assert second.done == 1 and second.ranking is None
    gen.close()  # cancelling: no further work, no error


def test_memory_mapped_float16_gallery_is_read_in_chunks(tmp_path):
    rng = np.random.default_rng(7)
    gv = sign_vectors(rng, 500).astype(np.float16)
    path = tmp_path / "g.npy"
    np.save(path, gv)
    mm = np.load(path, mmap_mode="r")
    qv = sign_vectors(rng, 6)
    ds = random_dataset(rng, 6, 500, with_self=True)
    r = list(iter_rank(aligned(qv, mm), ds, k=10, gallery_chunk_rows=64))[-1].ranking
    s = exact_scores(qv, gv.astype(np.float32))
    for qi in range(6):
        order = brute_force_order(s[qi])
        np.testing.assert_array_equal(r.top_indices[qi], order[:10])


def test_k_below_one_is_refused():
    rng = np.random.default_rng(8)
    ds = random_dataset(rng, 1, 5)
    with pytest.raises(InputError, match="--depth must be at least 1"):
        rank(aligned(sign_vectors(rng, 1), sign_vectors(rng, 5)), ds, k=0)


# -- a new query vector (search by photo) --------------------------------------------------

@pytest.mark.parametrize("chunk", [None, 7])
def test_a_new_vector_is_ranked_like_a_dataset_query(chunk):
    """score_vector + top_of_row on a query's own (unnormalised) vector give that query's
    stored top-K, ties and removed images included, with one gallery chunk or several."""
    rng = np.random.default_rng(3)
    qv, gv = sign_vectors(rng, 5), sign_vectors(rng, 40)
    gv[rng.integers(0, 40, size=10)] = gv[0]  # exact ties
    ignored = np.array([4, 9])
    ds = random_dataset(rng, 5, 40, global_ignored=ignored)
    result = list(iter_rank(aligned(qv, gv), ds, k=12, gallery_chunk_rows=chunk))[-1].ranking
    assert result is not None
    for q in range(5):
        row = result.score_vector(3.0 * qv[q])  # any length: normalised like the queries
        np.testing.assert_array_equal(row, result.score_row(q))
        idx, scores = top_of_row(row, 12)
        np.testing.assert_array_equal(idx, result.top_indices[q])
        np.testing.assert_array_equal(scores, result.top_scores[q])
        assert not np.isin(idx, ignored).any()


def test_top_of_row_by_hand():
    row = np.array([0.5, 0.9, -np.inf, 0.9, 0.1], dtype=np.float32)
    idx, scores = top_of_row(row, 3)
    assert idx.tolist() == [1, 3, 0]  # equal scores keep gallery order
    assert scores.tolist() == pytest.approx([0.9, 0.9, 0.5])
    assert top_of_row(row, 10)[0].tolist() == [1, 3, 0, 4]  # the removed one never appears
    assert len(top_of_row(row, 0)[0]) == 0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([-1.0, -0.5, 0.0, 0.25, 0.5, 1.0, -np.inf]), min_size=1,
                max_size=30), st.integers(1, 35))
def test_top_of_row_is_the_head_of_the_full_stable_order(values, k):
    row = np.array(values, dtype=np.float32)
    idx, scores = top_of_row(row, k)
    full = [i for i in brute_force_order(row) if np.isfinite(row[i])]
    assert idx.tolist() == full[:k]
    assert (np.diff(scores) <= 0).all()


def test_score_vector_refuses_another_dimension_and_file_rankings():
    rng = np.random.default_rng(0)
    ds = random_dataset(rng, 2, 6)
    result = rank(aligned(sign_vectors(rng, 2), sign_vectors(rng, 6)), ds, k=3)
    with pytest.raises(InputError, match="has 8 dimensions but the gallery vectors have 16"):
        result.score_vector(np.ones(8))
    from dataclasses import replace
    with pytest.raises(InputError, match="no gallery vectors"):
        replace(result, descriptors=None).score_vector(np.ones(16))


def test_the_lists_runs_of_near_ties_are_settled_when_first_read_not_by_an_evaluation():
    """Ordering near ties inside the top-K lists waits until a list is read: an evaluation
    (which counts the items' exact ranks, never the lists) leaves it pending; the first read
    of either list settles both, once, in the exact order."""
    from irviewer.core.evaluation import evaluate
    from irviewer.core.protocols import get_protocol

    rng = np.random.default_rng(12)
    qv, gv = tied_vectors(rng, "scaled signs", 6, 32), tied_vectors(rng, "scaled signs", 200, 32)
    ds = random_dataset(rng, 6, 200, max_per_group=20)
    result = rank(raw_aligned(qv, gv), ds, k=40)
    assert result.lists_pending is not None
    evaluate(ds, result, get_protocol("instance"))
    assert not result.lists_pending.done
    scores = result.top_scores
    assert result.lists_pending.done
    for q, order in enumerate(exact_cosine_order(qv, gv)):
        np.testing.assert_array_equal(result.top_indices[q], order[:40])
        assert (np.diff(scores[q]) <= 0).all()
