"""Score distributions: which pairs count, exact counts on the grid, TAR at FAR against
scikit-learn's roc_curve (a test-only reference), and the invariants hypothesis checks."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_curve

from irviewer.core.dataset import Dataset, build_query
from irviewer.core.errors import InputError
from irviewer.core.evaluation import evaluate, query_roles
from irviewer.core.protocols import Protocol
from irviewer.core.ranking import rank, ranking_from_lists
from irviewer.core.score_distribution import (
    FARS,
    GRID_BINS,
    PairScores,
    _Counts,
    allowed_negatives,
    edge,
    grid_bins,
    iter_pair_scores,
    pair_scores,
    query_pair_scores,
    tar_at_far,
)
from tests.core.helpers import aligned, random_dataset, sign_vectors

PROTO = Protocol("t", "test", positive=("positive",), ignored=("junk",), ap="finite")


def brute_pairs(ev, block_rows: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Return (scores, is positive) of every pair of ``ev``, from its whole score matrix
    (multiplied in blocks of ``block_rows`` queries as the streaming pass does, since a
    product's float32 rounding may depend on the block's shape)."""
    n_q = ev.dataset.n_queries
    step = block_rows or n_q
    matrix = np.concatenate([ev.ranking.score_rows(a, min(n_q, a + step))
                             for a in range(0, n_q, step)])
    scores, labels = [], []
    for q in range(n_q):
        row = matrix[q]
        pos, ign = query_roles(ev.dataset.queries[q], ev.protocol, ev.dataset.ignored_mask)
        keep = np.ones(len(row), dtype=bool)
        keep[ign] = False
        keep &= ~ev.dataset.ignored_mask
        is_pos = np.zeros(len(row), dtype=bool)
        is_pos[pos] = True
        scores.append(row[keep])
        labels.append(is_pos[keep])
    return np.concatenate(scores), np.concatenate(labels)


def random_evaluation(seed: int, n_q: int = 12, n_g: int = 300, dim: int = 16):
    rng = np.random.default_rng(seed)
    ds = random_dataset(rng, n_q, n_g, max_per_group=8,
                        global_ignored=rng.choice(n_g, 5, replace=False))
    # sign vectors: cosines are multiples of 1/16, so scores tie often
    q, g = sign_vectors(rng, n_q, dim), sign_vectors(rng, n_g, dim)
    return evaluate(ds, rank(aligned(q, g), ds, k=20), PROTO)


def test_hand_computed_pairs_of_one_query():
    # gallery cosines 1, 0.5, 0, -0.5, -1 to the query (2-d unit vectors); g1 positive,
    # g3 junk (in no pair), g4 removed for every query
    gallery = np.array([[1, 0], [0.5, np.sqrt(0.75)], [0, 1], [-0.5, np.sqrt(0.75)],
                        [-1, 0]], dtype=np.float32)
    query = build_query("q", "q", {"positive": [1], "junk": [3]})
    ds = Dataset(name="t", format="test", path=None, gallery=tuple(f"g{i}" for i in range(5)),
                 queries=(query,), groups=("positive", "junk"), protocols=("instance",),
                 global_ignored=np.array([4]))
    ev = evaluate(ds, rank(aligned(np.array([[1, 0]], np.float32), gallery), ds, k=5), PROTO)
    pairs = pair_scores(ev)
    assert (pairs.n_positive, pairs.n_negative) == (1, 2)  # g1 | g0, g2
    np.testing.assert_allclose(pairs.positive_scores, [0.5], atol=1e-6)
    np.testing.assert_allclose(pairs.top_negatives, [1.0, 0.0], atol=1e-6)
    # "score >= 0.25": g0 and g1 accepted: precision 1/2, recall 1
    i = GRID_BINS // 2 + GRID_BINS // 8
    assert edge(i) == 0.25
    assert pairs.accepted(i) == (1, 1)
    assert pairs.precision_recall(i) == (0.5, 1.0)
    assert pairs.accepted(0) == (1, 2) and pairs.accepted(GRID_BINS) == (0, 0)
    np.testing.assert_array_equal(query_pair_scores(ev, 0).negatives, pairs.negatives)


def test_grid_bins_decide_score_at_least_edge_exactly():
    # scores on and next to edges, in float32: a bin never puts a score below its edge
    i = np.arange(1, GRID_BINS, 37)
    edges = np.array([edge(int(k)) for k in i], dtype=np.float32)
    below = np.nextafter(edges, np.float32(-2))
    for values, offset in ((edges, 0), (below, -1)):
        np.testing.assert_array_equal(grid_bins(values), i + offset)
    assert grid_bins(np.array([1.0000001, -1.5, -np.inf], np.float32)).tolist() == [
        GRID_BINS - 1, 0, 0]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_streamed_counts_equal_whole_rows_and_tar_at_far_equals_scikit_learn(seed):
    ev = random_evaluation(seed, n_q=20, n_g=500)
    scores, labels = brute_pairs(ev, block_rows=3)
    # blocks of 3 rows: several blocks, the running top of the negatives merged across them
    steps = list(iter_pair_scores(ev, fars=(1e-3, 1e-2, 0.05, 0.2), block_rows=3))
    pairs = steps[-1].pairs
    assert pairs is not None and [s.done for s in steps[:-1]] == list(range(8))
    assert (pairs.n_positive, pairs.n_negative) == (labels.sum(), (~labels).sum())
    np.testing.assert_array_equal(np.sort(scores[labels]), pairs.positive_scores)
    fpr, tpr, thresholds = roc_curve(labels, scores)
    for point in tar_at_far(pairs):
        at = np.flatnonzero(fpr <= point.far_target)[-1]  # largest FPR not above the target
        assert point.tar == pytest.approx(tpr[at], abs=1e-12)
        assert point.far == pytest.approx(fpr[at], abs=1e-12)
        assert point.threshold == pytest.approx(thresholds[at], abs=0) or (
            np.isinf(point.threshold) and np.isinf(thresholds[at]))


def test_tar_at_far_equals_scikit_learn_on_fine_scores():
    # real-valued scores (few ties), FAR targets between ROC points
    rng = np.random.default_rng(7)
    n_q, n_g = 30, 800
    ds = random_dataset(rng, n_q, n_g, max_per_group=20)
    q = rng.normal(size=(n_q, 32)).astype(np.float32)
    g = rng.normal(size=(n_g, 32)).astype(np.float32)
    ev = evaluate(ds, rank(aligned(q, g), ds, k=20), PROTO)
    scores, labels = brute_pairs(ev)
    fars = (1e-4, 1e-3, 1e-2, 0.1)
    pairs = pair_scores(ev, fars)
    fpr, tpr, thresholds = roc_curve(labels, scores, drop_intermediate=False)
    for point in tar_at_far(pairs):
        at = np.flatnonzero(fpr <= point.far_target)[-1]
        assert (point.tar, point.far) == pytest.approx((tpr[at], fpr[at]), abs=1e-12)
        assert point.threshold == thresholds[at] or np.isinf(thresholds[at])


def test_every_pair_counts_once_against_a_brute_force_on_a_grid_edge():
    ev = random_evaluation(3)
    scores, labels = brute_pairs(ev)
    pairs = pair_scores(ev)
    for i in (1, 1000, GRID_BINS // 2, GRID_BINS // 2 + 1, 15000, GRID_BINS - 1):
        t = edge(i)
        assert pairs.accepted(i) == ((scores[labels] >= t).sum(), (scores[~labels] >= t).sum())


def test_a_ranking_read_from_a_file_has_no_distribution():
    rng = np.random.default_rng(0)
    ds = random_dataset(rng, 2, 10)
    listed = ranking_from_lists(ds, np.tile(np.arange(5), (2, 1)), None, "run.txt")
    ev = evaluate(ds, listed, PROTO)
    with pytest.raises(InputError, match=r"run\.txt: score distributions need the score of "
                       "every"):
        next(iter_pair_scores(ev))
    with pytest.raises(InputError, match="listed results only"):
        query_pair_scores(ev, 0)


def test_a_far_target_outside_zero_one_is_refused():
    pairs = PairScores(np.ones(GRID_BINS, np.int64), np.ones(GRID_BINS, np.int64),
                       np.zeros(GRID_BINS, np.float32), np.zeros(GRID_BINS, np.float32))
    with pytest.raises(ValueError, match="lie in"):
        tar_at_far(pairs, (0.0,))


# -- invariants --------------------------------------------------------------------------

scores_strategy = st.lists(st.integers(-16, 16), min_size=1, max_size=60)


def pairs_of(pos: list[int], neg: list[int], fars: tuple[float, ...]) -> PairScores:
    """PairScores of scores k/16 (ties on purpose), counted as the streaming pass does."""
    counts = _Counts(len(neg))
    counts.add_positives(np.array(pos, dtype=np.float32) / 16)
    block = np.array(neg, dtype=np.float32)[None, :] / 16
    counts.add_negatives(block, len(neg))
    return counts.result(fars)


@settings(max_examples=60, deadline=None)
@given(pos=scores_strategy, neg=scores_strategy,
       fars=st.lists(st.floats(1e-3, 0.99), min_size=1, max_size=6, unique=True))
def test_tar_is_monotone_in_far_and_thresholds_are_consistent(pos, neg, fars):
    fars = tuple(sorted(fars))
    points = tar_at_far(pairs_of(pos, neg, fars))
    p, n = np.array(pos) / 16, np.array(neg) / 16
    for a, b in pairwise(points):
        assert a.tar <= b.tar and a.far <= b.far and a.threshold >= b.threshold
    for point in points:
        t = point.threshold
        assert point.far <= point.far_target
        # the threshold's own counts, and no lower score keeps the FAR within the target
        assert point.tar == (p >= t).mean() and point.far == (n >= t).mean()
        lower = np.concatenate([p, n])
        lower = lower[lower < t]
        if len(lower):
            assert (n >= lower.max()).mean() > point.far_target


@settings(max_examples=60, deadline=None)
@given(pos=scores_strategy, neg=scores_strategy, i=st.integers(0, GRID_BINS))
def test_precision_and_recall_at_a_threshold_equal_a_brute_force_count(pos, neg, i):
    pairs = pairs_of(pos, neg, FARS)
    p, n = np.array(pos) / 16, np.array(neg) / 16
    t = -np.inf if i == 0 else np.inf if i == GRID_BINS else edge(i)
    tp, fp = (p >= t).sum(), (n >= t).sum()
    precision, recall = pairs.precision_recall(i)
    assert recall == tp / len(p)
    assert precision == tp / (tp + fp) if tp + fp else np.isnan(precision)


@given(n=st.integers(1, 10**7), far=st.floats(1e-6, 0.999))
def test_allowed_negatives_is_the_largest_count_within_the_far(n, far):
    m = allowed_negatives(far, n)
    assert m / n <= far and (m + 1 > n or (m + 1) / n > far)


@pytest.mark.parametrize("layout", ["random", "sample_misleads"])
def test_the_highest_negatives_kept_are_the_highest_of_every_block(layout):
    # blocks far larger than what is kept: the kept scores come through a sampled floor;
    # in "sample_misleads" the sampled places hold a spread of scores and the others 0, so
    # too few scores pass the floor and every score is taken instead
    rng = np.random.default_rng(5)
    keep, blocks = 2_000, []
    for _ in range(3):
        if layout == "random":
            block = rng.normal(size=300_000).astype(np.float32)
        else:
            block = np.zeros(300_000, dtype=np.float32)
            block[::300_000 // (1 << 16)] = rng.random(len(block[::300_000 // (1 << 16)]))
        block[rng.random(len(block)) < 0.05] = -np.inf  # pairs that are not negatives
        blocks.append(block)
    counts = _Counts(keep)
    for block in blocks:
        counts.add_negatives(block[None, :], int(np.isfinite(block).sum()))
    every = np.concatenate(blocks)
    every = every[np.isfinite(every)]
    np.testing.assert_array_equal(np.sort(counts.top), np.sort(every)[-keep:])
    assert counts.negatives.sum() == len(every)


def test_a_reranked_rankings_blocks_are_its_own_rows():
    """k-reciprocal re-ranking scores by negated distances in [-1, 0]: the pairs are read
    from its block rows, which equal its rows one by one."""
    from irviewer.opening.opener import open_now
    from irviewer.opening.request import OpenRequest, demo_paths

    manifest, strong = demo_paths()
    spec = "k-reciprocal:k1=6"
    ev = open_now(OpenRequest(manifest, (strong,), rerank=(spec,))).evaluation(
        f"strong.npz + {spec}", "instance")
    ranking = ev.ranking
    assert ranking.block_scores is not None
    block = ranking.score_rows(3, 9)
    np.testing.assert_array_equal(block, np.stack([ranking.score_row(q) for q in range(3, 9)]))
    finite = block[np.isfinite(block)]
    assert finite.max() <= 0 and finite.min() >= -1
    scores, labels = brute_pairs(ev)
    pairs = pair_scores(ev)
    assert (pairs.n_positive, pairs.n_negative) == (labels.sum(), (~labels).sum())
    np.testing.assert_array_equal(pairs.positive_scores, np.sort(scores[labels]))
